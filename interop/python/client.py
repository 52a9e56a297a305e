"""A grpcio (gRPC C core) interop client: the basic cases against any TestService server.

Used against `grpc-calls serve` to show the project's test server is a faithful peer.

Usage: python client.py --server_port PORT [--server_host 127.0.0.1] [--test_case all|NAME[,NAME]]
Prints one line per case and "N passed, M failed"; exits non-zero on any failure.
"""

import argparse
import sys
import traceback

import grpc

import protos

messages_pb2, empty_pb2, test_pb2_grpc = protos.load()

PING_REQUEST_SIZES = [27182, 8, 1828, 45904]
PING_RESPONSE_SIZES = [31415, 9, 2653, 58979]


def check(condition, description):
    if not condition:
        raise AssertionError(description)


def empty_unary(stub):
    response = stub.EmptyCall(empty_pb2.Empty())
    check(response == empty_pb2.Empty(), f"expected Empty, got {response}")


def large_unary(stub):
    request = messages_pb2.SimpleRequest(
        response_size=314159, payload=messages_pb2.Payload(body=b"\0" * 271828)
    )
    response = stub.UnaryCall(request)
    check(response.payload.body == b"\0" * 314159, f"got {len(response.payload.body)} bytes")


def client_streaming(stub):
    requests = (
        messages_pb2.StreamingInputCallRequest(payload=messages_pb2.Payload(body=b"\0" * size))
        for size in PING_REQUEST_SIZES
    )
    response = stub.StreamingInputCall(requests)
    check(response.aggregated_payload_size == 74922, f"got {response.aggregated_payload_size}")


def server_streaming(stub):
    request = messages_pb2.StreamingOutputCallRequest(
        response_parameters=[messages_pb2.ResponseParameters(size=s) for s in PING_RESPONSE_SIZES]
    )
    sizes = [len(r.payload.body) for r in stub.StreamingOutputCall(request)]
    check(sizes == PING_RESPONSE_SIZES, f"got sizes {sizes}")


def ping_pong(stub):
    import queue

    requests = queue.Queue()

    def request_iterator():
        while True:
            item = requests.get()
            if item is None:
                return
            yield item

    responses = stub.FullDuplexCall(request_iterator())
    for request_size, response_size in zip(PING_REQUEST_SIZES, PING_RESPONSE_SIZES):
        requests.put(
            messages_pb2.StreamingOutputCallRequest(
                response_parameters=[messages_pb2.ResponseParameters(size=response_size)],
                payload=messages_pb2.Payload(body=b"\0" * request_size),
            )
        )
        response = next(responses)
        check(len(response.payload.body) == response_size, f"pong of {len(response.payload.body)}")
    requests.put(None)
    check(next(responses, None) is None, "expected the stream to end")


def custom_metadata(stub):
    metadata = [
        ("x-grpc-test-echo-initial", "test_initial_metadata_value"),
        ("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"),
    ]
    request = messages_pb2.SimpleRequest(
        response_size=314159, payload=messages_pb2.Payload(body=b"\0" * 271828)
    )
    _, call = stub.UnaryCall.with_call(request, metadata=metadata)
    check_echo(call.initial_metadata(), call.trailing_metadata())

    stream = stub.FullDuplexCall(
        iter([
            messages_pb2.StreamingOutputCallRequest(
                response_parameters=[messages_pb2.ResponseParameters(size=314159)],
                payload=messages_pb2.Payload(body=b"\0" * 271828),
            )
        ]),
        metadata=metadata,
    )
    list(stream)
    check_echo(stream.initial_metadata(), stream.trailing_metadata())


def check_echo(initial, trailing):
    initial, trailing = dict(initial), dict(trailing)
    check(
        initial.get("x-grpc-test-echo-initial") == "test_initial_metadata_value",
        f"initial echo: {initial}",
    )
    check(trailing.get("x-grpc-test-echo-trailing-bin") == b"\xab\xab\xab", f"trailing echo: {trailing}")


def status_code_and_message(stub):
    status = messages_pb2.EchoStatus(code=2, message="test status message")
    try:
        stub.UnaryCall(messages_pb2.SimpleRequest(response_status=status))
        raise AssertionError("UnaryCall succeeded; expected UNKNOWN")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.UNKNOWN, f"got {error.code()}")
        check(error.details() == "test status message", f"got {error.details()!r}")
    stream = stub.FullDuplexCall(iter([messages_pb2.StreamingOutputCallRequest(response_status=status)]))
    try:
        list(stream)
        raise AssertionError("FullDuplexCall succeeded; expected UNKNOWN")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.UNKNOWN, f"got {error.code()}")
        check(error.details() == "test status message", f"got {error.details()!r}")


CASES = {
    "empty_unary": empty_unary,
    "large_unary": large_unary,
    "client_streaming": client_streaming,
    "server_streaming": server_streaming,
    "ping_pong": ping_pong,
    "custom_metadata": custom_metadata,
    "status_code_and_message": status_code_and_message,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server_host", default="127.0.0.1")
    parser.add_argument("--server_port", type=int, required=True)
    parser.add_argument("--test_case", default="all")
    args = parser.parse_args()

    names = list(CASES) if args.test_case == "all" else args.test_case.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"unknown test case(s): {', '.join(unknown)}; known: {', '.join(CASES)}")

    passed = failed = 0
    with grpc.insecure_channel(f"{args.server_host}:{args.server_port}") as channel:
        stub = test_pb2_grpc.TestServiceStub(channel)
        for name in names:
            try:
                CASES[name](stub)
                passed += 1
                print(f"PASS  {name}", flush=True)
            except Exception as error:  # report every failure, keep going
                failed += 1
                print(f"FAIL  {name}: {error!r}", flush=True)
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
