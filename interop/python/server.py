"""The gRPC interop TestService on grpcio (gRPC C core), an independent peer for grpc-calls.

Behaviour follows gRPC's interop test descriptions: payload sizes, streaming with intervals,
metadata echo (x-grpc-test-echo-initial, x-grpc-test-echo-trailing-bin), status echo,
and UNIMPLEMENTED for unknown methods. It does not check expect_compressed: grpcio consumes the
grpc-encoding header and gives the application no way to see whether a request was compressed,
so run.sh leaves the client_compressed_* cases out against this server.

Test aids for grpc-calls' own tests: a request with x-grpc-calls-sleep-ms: N waits N ms (or until
the RPC is cancelled) before the handler runs; with --events FILE, every RPC whose metadata has
x-grpc-calls-test-id: ID appends "ID METHOD OUTCOME" to FILE when its handler returns (see Call).

It also serves the standard health service (grpcio-health-checking), with "" and
grpc.testing.TestService SERVING; a call with x-grpc-calls-set-health: SERVICE=STATUS sets that
status first (STATUS: SERVING, NOT_SERVING or UNKNOWN), so tests can flip statuses. And server
reflection (grpcio-reflection), over v1alpha as grpcio serves it and over v1 with the same servicer
(the two versions' messages are the same on the wire).

With --count-unary N, it prints "unary calls: K" after every N unary calls it answered, so that a
balancing test can tell how a client spread its calls over several servers.

Usage: python server.py [--host 127.0.0.1] [--port 0] [--compress-responses] [--events FILE]
                        [--count-unary N]
Prints "listening on HOST:PORT" once it accepts connections (port 0 picks a free one).
"""

import argparse
import functools
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

import protos

messages_pb2, empty_pb2, test_pb2_grpc = protos.load()

ECHO_INITIAL = "x-grpc-test-echo-initial"
ECHO_TRAILING = "x-grpc-test-echo-trailing-bin"
ECHO_USER_AGENT = "x-grpc-test-echo-useragent"
TEST_ID = "x-grpc-calls-test-id"
SLEEP_MS = "x-grpc-calls-sleep-ms"
RICH_STATUS = "x-grpc-calls-rich-status"

# How long a recorded call whose request stream ended waits for grpcio to report a cancel (Call).
END_GRACE_SECONDS = 2.0


class Events:
    """The --events file: one "ID METHOD OUTCOME" line per recorded RPC, each written whole with
    one write to a file opened for appending."""

    def __init__(self, path):
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()

    def record(self, test_id, method, outcome):
        test_id = "_".join(test_id.split()) or "_"
        line = f"{test_id} {method} {' '.join(outcome.split())}\n".encode()
        with self._lock:
            os.write(self._fd, line)


EVENTS = None  # Events, with --events


class UnaryCount:
    """Counts answered unary calls; prints the count after every `every` of them."""

    def __init__(self, every):
        self.every = every
        self.count = 0
        self.lock = threading.Lock()

    def add(self):
        with self.lock:
            self.count += 1
            if self.count % self.every == 0:
                print(f"unary calls: {self.count}", flush=True)


UNARY_COUNT = None  # UnaryCount, with --count-unary


class Call:
    """What the recorder learns about one RPC, and its record's OUTCOME when the handler returns:

    - "cancelled" or "deadline" if the RPC was cancelled while the handler ran: grpcio reports it
      inactive (the client reset the stream, the connection went or the deadline passed), its
      request iterator raised, or the x-grpc-calls-sleep-ms wait ended early. "deadline" if that
      happened within min(100 ms, a quarter of the timeout) of the deadline (grpcio cannot say
      which: a deadline ends the call as a cancel does, and a client whose deadline passes resets
      the stream with CANCEL).
    - "error:CODE: message" if the handler ended the RPC with a status (set_code, abort) or an
      exception (UNKNOWN, as grpcio answers);
    - "error:the handler returned before the request stream ended" if a client-streaming or
      bidirectional handler returned OK without reaching the end of its requests;
    - "complete" otherwise: the handler returned OK and, for client-streaming and bidirectional
      methods, its request iterator ended (the client's END_STREAM).

    grpcio can end a request iterator for a cancel as for END_STREAM (its message read fails
    before it marks the call cancelled; about 1 cancel in 20 here), reporting the cancel a moment
    later. So a recorded call whose request iterator ended waits up to END_GRACE_SECONDS for that
    report before it records "complete" (it took under 1 ms when measured).
    """

    def __init__(self, context, method, client_stream):
        self.context = context
        self.method = method
        self.client_stream = client_stream
        self.start = time.monotonic()
        remaining = context.time_remaining()
        # grpcio gives an infinite deadline as a huge remaining time.
        self.deadline = self.start + remaining if remaining is not None and remaining < 1e8 else None
        metadata = context.invocation_metadata()
        self.test_id = next((v for k, v in metadata if k == TEST_ID), None)
        self.sleep_ms = next((v for k, v in metadata if k == SLEEP_MS), None)
        self.saw_end = False  # the request iterator ended
        self.cancel_seen = False
        self.ended = threading.Event()  # set when grpcio ends the RPC, cancelled or finished
        if not context.add_callback(self.ended.set):
            self.ended.set()

    def track(self, request_iterator):
        """The request iterator, noting how it ends."""
        while True:
            try:
                request = next(request_iterator)
            except StopIteration:
                self.saw_end = True
                return
            except grpc.RpcError:
                self.cancel_seen = True
                raise
            yield request

    def sleep_if_asked(self):
        if self.sleep_ms is None:
            return
        try:
            ms = int(self.sleep_ms.strip())
            if ms < 0:
                raise ValueError
        except ValueError:
            self.context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{SLEEP_MS}: {self.sleep_ms!r} is not a number of milliseconds",
            )
        if self.ended.wait(ms / 1000):
            self.cancel_seen = True
            code = grpc.StatusCode.DEADLINE_EXCEEDED if self.near_deadline() else grpc.StatusCode.CANCELLED
            self.context.abort(code, "cancelled while sleeping as x-grpc-calls-sleep-ms asked")

    def near_deadline(self):
        if self.deadline is None:
            return False
        slack = min(0.1, (self.deadline - self.start) / 4)
        return time.monotonic() >= self.deadline - slack

    def finish(self, exception):
        if EVENTS is None or self.test_id is None:
            return
        EVENTS.record(self.test_id, self.method, self.outcome(exception))

    def outcome(self, exception):
        code = self.context.code() if hasattr(self.context, "code") else None  # grpcio >= 1.38
        if code == grpc.StatusCode.OK:
            code = None
        # An abort makes grpcio call the RPC inactive too; that is no cancel.
        cancelled = self.cancel_seen or (code is None and not self.context.is_active())
        if not cancelled and code is None and exception is None and self.client_stream and self.saw_end:
            self.ended.wait(END_GRACE_SECONDS)
            cancelled = not self.context.is_active()
        if cancelled:
            return "deadline" if self.near_deadline() else "cancelled"
        if code is not None:
            details = (self.context.details() if hasattr(self.context, "details") else None) or b""
            if isinstance(details, bytes):
                details = details.decode("utf-8", "replace")
            return f"error:{code.name}: {details}"
        if exception is not None:
            return f"error:UNKNOWN: Exception calling application: {exception}"
        if self.client_stream and not self.saw_end:
            return "error:the handler returned before the request stream ended"
        return "complete"


def recorded(client_stream=False, server_stream=False):
    """Wraps a servicer method: x-grpc-calls-sleep-ms, and the --events record (Call)."""

    def wrap(method):
        if not server_stream:

            @functools.wraps(method)
            def handler(self, request, context):
                call = Call(context, method.__name__, client_stream)
                if client_stream:
                    request = call.track(request)
                try:
                    call.sleep_if_asked()
                    response = method(self, request, context)
                except BaseException as exception:
                    call.finish(exception)
                    raise
                call.finish(None)
                return response

        else:

            @functools.wraps(method)
            def handler(self, request, context):
                call = Call(context, method.__name__, client_stream)
                if client_stream:
                    request = call.track(request)
                try:
                    call.sleep_if_asked()
                    yield from method(self, request, context)
                except BaseException as exception:  # GeneratorExit: grpcio stopped iterating
                    call.finish(exception)
                    raise
                call.finish(None)

        return handler

    return wrap


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


def fail_rich_if_asked(context):
    """grpc-calls' own case rich_error_details: with RICH_STATUS in the request metadata, the RPC
    fails with a google.rpc.Status carrying typed details (grpcio-status), as grpc-calls'
    RichErrorCase.status."""
    if not any(key == RICH_STATUS for key, _ in context.invocation_metadata()):
        return
    error_info = error_details_pb2.ErrorInfo(reason="STOCKOUT", domain="example.com", metadata={"sku": "42"})
    retry_info = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=2))
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message="out of stock")
    status.details.add().Pack(error_info)
    status.details.add().Pack(retry_info)
    context.abort_with_status(rpc_status.to_status(status))


def payload(size):
    return messages_pb2.Payload(type=messages_pb2.COMPRESSABLE, body=b"\0" * size)


class TestService(test_pb2_grpc.TestServiceServicer):
    @recorded()
    def EmptyCall(self, request, context):
        echo_metadata(context)
        return empty_pb2.Empty()

    @recorded()
    def UnaryCall(self, request, context):
        echo_metadata(context)
        if fail_if_asked(request.response_status, context):
            return messages_pb2.SimpleResponse()
        fail_rich_if_asked(context)
        if request.response_compressed.value:
            context.set_compression(grpc.Compression.Gzip)
        if UNARY_COUNT:
            UNARY_COUNT.add()
        return messages_pb2.SimpleResponse(payload=payload(request.response_size))

    @recorded()
    def CacheableUnaryCall(self, request, context):
        echo_metadata(context)
        context.send_initial_metadata([("cache-control", "max-age=60, public")])
        body = str(time.monotonic_ns()).encode()
        return messages_pb2.SimpleResponse(payload=messages_pb2.Payload(body=body))

    @recorded(server_stream=True)
    def StreamingOutputCall(self, request, context):
        echo_metadata(context)
        for parameters in request.response_parameters:
            if parameters.interval_us:
                time.sleep(parameters.interval_us / 1e6)
            yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))
        if not fail_if_asked(request.response_status, context):
            fail_rich_if_asked(context)

    @recorded(client_stream=True)
    def StreamingInputCall(self, request_iterator, context):
        echo_metadata(context)
        total = 0
        for request in request_iterator:
            total += len(request.payload.body)
        return messages_pb2.StreamingInputCallResponse(aggregated_payload_size=total)

    @recorded(client_stream=True, server_stream=True)
    def FullDuplexCall(self, request_iterator, context):
        echo_metadata(context)
        for request in request_iterator:
            if fail_if_asked(request.response_status, context):
                return
            for parameters in request.response_parameters:
                if parameters.interval_us:
                    time.sleep(parameters.interval_us / 1e6)
                yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))

    @recorded(client_stream=True, server_stream=True)
    def HalfDuplexCall(self, request_iterator, context):
        echo_metadata(context)
        requests = list(request_iterator)
        for request in requests:
            if fail_if_asked(request.response_status, context):
                return
            for parameters in request.response_parameters:
                yield messages_pb2.StreamingOutputCallResponse(payload=payload(parameters.size))

    @recorded()
    def UnimplementedCall(self, request, context):
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "UnimplementedCall is not implemented")


SET_HEALTH = "x-grpc-calls-set-health"
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def add_reflection(server):
    """grpcio-reflection's servicer, under v1alpha (its own name) and v1."""
    names = ("grpc.testing.TestService", "grpc.health.v1.Health", reflection.SERVICE_NAME, REFLECTION_V1)
    servicer = reflection.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    info = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": info}),)
    )


class SetHealth(grpc.ServerInterceptor):
    """Applies x-grpc-calls-set-health: SERVICE=STATUS before any call is handled."""

    def __init__(self, servicer):
        self.servicer = servicer

    def intercept_service(self, continuation, handler_call_details):
        for key, value in handler_call_details.invocation_metadata or ():
            if key == SET_HEALTH:
                service, _, status = value.partition("=")
                self.servicer.set(service, health_pb2.HealthCheckResponse.ServingStatus.Value(status))
        return continuation(handler_call_details)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--compress-responses",
        action="store_true",
        help="gzip every response, whatever the client sent (it must accept gzip)",
    )
    parser.add_argument(
        "--events",
        metavar="FILE",
        help="append 'ID METHOD OUTCOME' to FILE when an RPC with x-grpc-calls-test-id ends",
    )
    parser.add_argument(
        "--count-unary",
        metavar="N",
        type=int,
        help="print 'unary calls: K' after every N unary calls answered",
    )
    args = parser.parse_args()
    global EVENTS, UNARY_COUNT
    if args.events:
        EVENTS = Events(args.events)
    if args.count_unary:
        UNARY_COUNT = UnaryCount(args.count_unary)

    # Blocking watchers (each Watch holds a worker thread): with grpcio 1.85's non-blocking
    # ones, Check calls hung for good after a few watches had been set and cancelled.
    health_servicer = health.HealthServicer(experimental_non_blocking=False)
    for service in ("", "grpc.testing.TestService"):
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=16),
        interceptors=[SetHealth(health_servicer)],
        compression=grpc.Compression.Gzip if args.compress_responses else None,
        options=[
            ("grpc.max_send_message_length", 8 * 1024 * 1024),
            ("grpc.max_receive_message_length", 8 * 1024 * 1024),
        ],
    )
    test_pb2_grpc.add_TestServiceServicer_to_server(TestService(), server)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    add_reflection(server)
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
