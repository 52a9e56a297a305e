"""The grpcio (gRPC C core) client side of `grpc-calls bench`.

A long-lived process: it reads one JSON command per line on stdin, runs that slice of a scenario
against the interop server and writes one JSON result per line on stdout:

  command: {"scenario": "unary-latency", "port": 50051, "calls": 2000, "seconds": 1.0,
            "concurrency": 64, "in_flight": 10, "size": 16}
  result:  {"latencies_us": [...], "calls": n, "messages": n, "bytes": n,
            "seconds": wall-clock, "cpu_seconds": this process's CPU time,
            "context_switches": this process's context switches}

The requests are the same bytes the Swift clients send, and measurement happens inside this
process, so interpreter start-up is not counted.
"""

import json
import queue
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

import protos

messages_pb2, empty_pb2, test_pb2_grpc = protos.load()

_channels = {}


def stub_for(port):
    if port not in _channels:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=120)
        _channels[port] = test_pb2_grpc.TestServiceStub(channel)
    return _channels[port]


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def context_switches():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw


def unary_request(request_bytes, response_bytes):
    return messages_pb2.SimpleRequest(
        response_size=response_bytes, payload=messages_pb2.Payload(body=b"\0" * request_bytes)
    )


def unary_latency(stub, command, result):
    request = unary_request(1, 1)
    for _ in range(command["calls"]):
        start = time.perf_counter_ns()
        stub.UnaryCall(request)
        result["latencies_us"].append((time.perf_counter_ns() - start) // 1000)
        result["calls"] += 1


def unary_throughput(stub, command, result):
    request = unary_request(1024, 1024)
    deadline = time.monotonic() + command["seconds"]

    def worker():
        calls = 0
        while time.monotonic() < deadline:
            stub.UnaryCall(request)
            calls += 1
        return calls

    with ThreadPoolExecutor(max_workers=command["concurrency"]) as pool:
        futures = [pool.submit(worker) for _ in range(command["concurrency"])]
        result["calls"] = sum(f.result() for f in futures)


def ping_pong(stub, command, result):
    request = messages_pb2.StreamingOutputCallRequest(
        response_parameters=[messages_pb2.ResponseParameters(size=1)],
        payload=messages_pb2.Payload(body=b"\0"),
    )
    requests = queue.Queue()

    def request_iterator():
        while (item := requests.get()) is not None:
            yield item

    responses = stub.FullDuplexCall(request_iterator())
    for _ in range(command["calls"]):
        start = time.perf_counter_ns()
        requests.put(request)
        next(responses)
        result["latencies_us"].append((time.perf_counter_ns() - start) // 1000)
        result["calls"] += 1
    requests.put(None)
    for _ in responses:
        pass


def large_unary(stub, command, result):
    size = 1024 * 1024
    request = unary_request(size, size)
    with ThreadPoolExecutor(max_workers=command["in_flight"]) as pool:
        responses = list(pool.map(lambda _: stub.UnaryCall(request), range(command["calls"])))
    result["calls"] = len(responses)
    result["bytes"] = sum(len(r.payload.body) + size for r in responses)


def server_streaming(stub, command, result):
    size = command["size"]
    count = command["count"]
    request = messages_pb2.StreamingOutputCallRequest(
        response_parameters=[messages_pb2.ResponseParameters(size=size)] * count
    )
    deadline = time.monotonic() + command["seconds"]
    while True:
        for response in stub.StreamingOutputCall(request):
            result["messages"] += 1
            result["bytes"] += len(response.payload.body)
        if time.monotonic() >= deadline:
            break


SCENARIOS = {
    "unary-latency": unary_latency,
    "unary-throughput": unary_throughput,
    "ping-pong": ping_pong,
    "large-unary": large_unary,
    "server-streaming-16b": server_streaming,
    "server-streaming-64k": server_streaming,
}


def main():
    for line in sys.stdin:
        command = json.loads(line)
        result = {"latencies_us": [], "calls": 0, "messages": 0, "bytes": 0}
        try:
            stub = stub_for(command["port"])
            cpu, switches, start = cpu_seconds(), context_switches(), time.monotonic()
            SCENARIOS[command["scenario"]](stub, command, result)
            result["seconds"] = time.monotonic() - start
            result["cpu_seconds"] = cpu_seconds() - cpu
            result["context_switches"] = context_switches() - switches
        except Exception as error:  # reported to the bench, which fails the run
            result = {"error": repr(error)}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
