"""Generates the grpc.testing Python stubs at run time from the repository's protos.

The stubs come from grpcio-tools (the same protoc grpcio ships), written to a temporary
directory that is put on sys.path, so nothing generated is committed.
"""

import atexit
import os
import shutil
import sys
import tempfile

from grpc_tools import protoc
import importlib.resources

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTOS = os.path.join(ROOT, "Protos")
FILES = [
    "src/proto/grpc/testing/empty.proto",
    "src/proto/grpc/testing/messages.proto",
    "src/proto/grpc/testing/test.proto",
]


def load():
    """Returns the (messages, empty, test services) modules."""
    out = tempfile.mkdtemp(prefix="grpc-calls-interop-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    well_known = str(importlib.resources.files("grpc_tools") / "_proto")
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{well_known}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        *FILES,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("grpc_tools.protoc failed to generate the interop stubs")
    sys.path.insert(0, out)
    from src.proto.grpc.testing import empty_pb2, messages_pb2, test_pb2_grpc
    # test.proto defines no messages, so nothing above imports its module; server reflection
    # finds TestService only once its descriptor is in the default pool.
    from src.proto.grpc.testing import test_pb2  # noqa: F401

    return messages_pb2, empty_pb2, test_pb2_grpc
