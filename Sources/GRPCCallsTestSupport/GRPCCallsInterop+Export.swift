// The interop server, its client and the grpc.testing messages are part of this product's API
// (a TestServer's server and client, the requests of InteropRequests): tests that import
// GRPCCallsTestSupport use them without a product of their own.
@_exported public import GRPCCallsInterop
