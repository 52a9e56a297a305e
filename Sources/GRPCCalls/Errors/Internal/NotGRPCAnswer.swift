internal import GRPCCore

/// What a call's error says when the peer answered, but not as a gRPC server: an HTTP status
/// other than 200, a content type other than gRPC's, or HTTP/1 (a web server, or a proxy's
/// error page, where the client expected gRPC).
///
/// The transport maps the HTTP status to a code by gRPC's HTTP-to-status table; its message
/// names the status but not what else the peer sent, and calls a content type that is not
/// gRPC's "missing". These messages quote the answer and say where to look.
enum NotGRPCAnswer {
  /// The message for `error`, when the transport raised it because the response headers were
  /// not gRPC's; `nil` for any other error.
  static func message(for error: RPCError) -> String? {
    let contentType = error.metadata[stringValues: "content-type"].first { _ in true }
    switch CoreFailure(error) {
    case .notHTTP200(let status)?:
      let type = contentType.map { " with content-type '\($0)'" } ?? ""
      return "The server answered HTTP status \(status)\(type), not a gRPC response: "
        + "check the host, the port and the method's path, and any proxy in between"
    case .notGRPCContentType?:
      let answered = contentType.map { "with content-type '\($0)'" } ?? "without a content-type"
      return "The server answered \(answered), not 'application/grpc': "
        + "it is not a gRPC server, or a proxy answered in its place"
    default:
      return nil
    }
  }
}

/// The peer answered the HTTP/2 connection preface in HTTP/1 (see ``HTTP1AnswerDetector``).
struct HTTP1Answer: Error, CustomStringConvertible {
  /// The answer's first line, e.g. `HTTP/1.1 400 Bad Request`.
  var statusLine: String

  var message: String {
    "The server answered in HTTP/1 ('\(self.statusLine)'), not HTTP/2: "
      + "it is not a gRPC server, or a proxy in between does not pass HTTP/2 through"
  }

  var description: String { self.message }
}
