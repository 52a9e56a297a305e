"""A grpcio RouteGuide server with known features, for Examples' RouteGuide client.

"Feature i" stands at latitude 400000000 + i * 1000000, longitude -740000000 - i * 1000000,
for i in 0..9. RouteChat answers each note with the earlier notes at the same location, as
gRPC's own example does. Prints "listening on HOST:PORT" once it serves.
"""

import argparse
import atexit
import importlib.resources
import os
import shutil
import signal
import sys
import tempfile
import threading
from concurrent import futures

import grpc
from grpc_tools import protoc

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(ROOT, "Examples", "Sources", "RouteGuide")


def load():
    out = tempfile.mkdtemp(prefix="grpc-calls-route-guide-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    well_known = str(importlib.resources.files("grpc_tools") / "_proto")
    args = ["protoc", f"-I{PROTO_DIR}", f"-I{well_known}", f"--python_out={out}",
            f"--grpc_python_out={out}", "route_guide.proto"]
    if protoc.main(args) != 0:
        raise RuntimeError("grpc_tools.protoc failed to generate the RouteGuide stubs")
    sys.path.insert(0, out)
    import route_guide_pb2
    import route_guide_pb2_grpc
    return route_guide_pb2, route_guide_pb2_grpc


pb2, pb2_grpc = load()


def point(i):
    return pb2.Point(latitude=400000000 + i * 1000000, longitude=-740000000 - i * 1000000)


FEATURES = [pb2.Feature(name=f"Feature {i}", location=point(i)) for i in range(10)]


def key(p):
    return (p.latitude, p.longitude)


def find(p):
    for feature in FEATURES:
        if key(feature.location) == key(p):
            return feature
    return None


class RouteGuide(pb2_grpc.RouteGuideServicer):
    def GetFeature(self, request, context):
        return find(request) or pb2.Feature(name="", location=request)

    def ListFeatures(self, request, context):
        lat = sorted((request.lo.latitude, request.hi.latitude))
        lon = sorted((request.lo.longitude, request.hi.longitude))
        for feature in FEATURES:
            p = feature.location
            if lat[0] <= p.latitude <= lat[1] and lon[0] <= p.longitude <= lon[1]:
                yield feature

    def RecordRoute(self, request_iterator, context):
        points = features = 0
        for p in request_iterator:
            points += 1
            if find(p):
                features += 1
        return pb2.RouteSummary(point_count=points, feature_count=features)

    def RouteChat(self, request_iterator, context):
        seen = {}
        for note in request_iterator:
            earlier = seen.setdefault(key(note.location), [])
            for previous in earlier:
                yield previous
            earlier.append(note)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb2_grpc.add_RouteGuideServicer_to_server(RouteGuide(), server)
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    server.start()
    print(f"listening on {args.host}:{port}", flush=True)
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
