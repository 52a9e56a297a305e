"""The gRPC interop TestService on grpcio (gRPC C core), an independent peer for grpc-calls.

Behaviour follows gRPC's interop test descriptions: payload sizes, streaming with intervals,
metadata echo (x-grpc-test-echo-initial, x-grpc-test-echo-trailing-bin), status echo,
and UNIMPLEMENTED for unknown methods. It does not check expect_compressed: grpcio consumes the
grpc-encoding header and gives the application no way to see whether a request was compressed,
so run.sh leaves the client_compressed_* cases out against this server.

Usage: python server.py [--host 127.0.0.1] [--port 0]
Prints "listening on HOST:PORT" once it accepts connections (port 0 picks a free one).
"""

import argparse
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

import protos

messages_pb2, empty_pb2, test_pb2_grpc = protos.load()

ECHO_INITIAL = "x-grpc-test-echo-initial"
ECHO_TRAILING = "x-grpc-test-echo-trailing-bin"
ECHO_USER_AGENT = "x-grpc-test-echo-useragent"


def echo_metadata(context):
    """Sends the echoed initial metadata and sets the echoed trailers."""
    initial, trailing = [], []
    for key, value in context.invocation_metadata():
        if key == ECHO_INITIAL:
            initial.append((key, value))
        elif key == ECHO_TRAILING:
            trailing.append((key, value))
        elif key == ECHO_USER_AGENT:
            agents = [v for k, v in context.invocation_metadata() if k == "user-agent"]
            initial.extend((ECHO_USER_AGENT, agent) for agent in agents)
    if initial:
        context.send_initial_metadata(initial)
    if trailing:
        context.set_trailing_metadata(trailing)


def fail_if_asked(status, context):
    """Ends the RPC with the status the request asks for; returns True if it did."""
    if status.code == 0:
        return False
    code = next((c for c in grpc.StatusCode if c.value[0] == status.code), grpc.StatusCode.UNKNOWN)
    context.set_code(code)
    context.set_details(status.message)
    return True


def payload(size):
    return messages_pb2.Payload(type=messages_pb2.COMPRESSABLE, body=b"\0" * size)


class TestService(test_pb2_grpc.TestServiceServicer):
    def EmptyCall(self, request, context):
        echo_metadata(context)
        return empty_pb2.Empty()

    def UnaryCall(self, request, context):
        echo_metadata(context)
        if fail_if_asked(request.response_status, context):
            return messages_pb2.SimpleResponse()
        if request.response_compressed.value:
            context.set_compression(grpc.Compression.Gzip)
        return messages_pb2.SimpleResponse(payload=payload(request.response_size))

    def CacheableUnaryCall(self, request, context):
        echo_metadata(context)
        context.send_initial_metadata([("cache-control", "max-age=60, public")])
        body = str(time.monotonic_ns()).encode()
        return messages_pb2.SimpleResponse(payload=messages_pb2.Payload(body=body))

    def StreamingOutputCall(self, request, context):
        echo_metadata(context)
        for parameters in request.response_parameters:
            if parameters.interval_us:
                time.sleep(parameters.interval_us / 1e6)
            yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))
        fail_if_asked(request.response_status, context)

    def StreamingInputCall(self, request_iterator, context):
        echo_metadata(context)
        total = 0
        for request in request_iterator:
            total += len(request.payload.body)
        return messages_pb2.StreamingInputCallResponse(aggregated_payload_size=total)

    def FullDuplexCall(self, request_iterator, context):
        echo_metadata(context)
        for request in request_iterator:
            if fail_if_asked(request.response_status, context):
                return
            for parameters in request.response_parameters:
                if parameters.interval_us:
                    time.sleep(parameters.interval_us / 1e6)
                yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))

    def HalfDuplexCall(self, request_iterator, context):
        echo_metadata(context)
        requests = list(request_iterator)
        for request in requests:
            if fail_if_asked(request.response_status, context):
                return
            for parameters in request.response_parameters:
                yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))

    def UnimplementedCall(self, request, context):
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "UnimplementedCall is not implemented")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--compress-responses",
        action="store_true",
        help="gzip every response, whatever the client sent (it must accept gzip)",
    )
    args = parser.parse_args()

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=16),
        compression=grpc.Compression.Gzip if args.compress_responses else None,
        options=[
            ("grpc.max_send_message_length", 8 * 1024 * 1024),
            ("grpc.max_receive_message_length", 8 * 1024 * 1024),
        ],
    )
    test_pb2_grpc.add_TestServiceServicer_to_server(TestService(), server)
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    if port == 0:
        sys.exit(f"could not bind {args.host}:{args.port}")
    server.start()
    print(f"listening on {args.host}:{port}", flush=True)

    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
