import Dispatch
import Foundation
import GRPCCalls
import GRPCCore
import GRPCProtoCalls
import Synchronization

// A RouteGuide client, messages and client generated from route_guide.proto by the build
// plugin. It calls every method twice: with typed callbacks, then with async/await.
//
// Usage: RouteGuide [--host 127.0.0.1] --port N   (a server with interop/python/route_guide_server.py's
// features: "Feature i" at latitude 400000000 + i * 1000000, longitude -740000000 - i * 1000000).

func argument(_ name: String) -> String? {
  let arguments = CommandLine.arguments
  return arguments.firstIndex(of: name).flatMap {
    arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
  }
}

guard let port = argument("--port") else {
  print("usage: RouteGuide [--host HOST] --port PORT")
  exit(2)
}
var options = GRPCCallOptions()
options.transportType = .insecure
options.timeout = 30
let client = Routeguide_RouteGuide(
  host: "\(argument("--host") ?? "127.0.0.1"):\(port)",
  callOptions: options
)

func point(_ index: Int) -> Routeguide_Point {
  var point = Routeguide_Point()
  point.latitude = Int32(400_000_000 + index * 1_000_000)
  point.longitude = Int32(-740_000_000 - index * 1_000_000)
  return point
}

var failures = 0
@MainActor func check(_ what: String, _ ok: Bool, _ detail: @autoclosure () -> String) {
  print("\(ok ? "ok  " : "FAIL") \(what): \(detail())")
  if !ok { failures += 1 }
}

/// Runs a callback call and waits for its close, collecting the messages it received.
func collect<Response: Sendable>(
  _ start: (GRPCResponseCallbacks<Response>) -> Void
) async -> (messages: [Response], error: GRPCError?) {
  let queue = DispatchQueue(label: "route-guide.responses")
  let messages = Mutex<[Response]>([])
  return await withCheckedContinuation { continuation in
    start(
      GRPCResponseCallbacks(queue: queue) { message in
        messages.withLock { $0.append(message) }
      } onClose: { _, error in
        continuation.resume(returning: (messages.withLock { $0 }, error))
      }
    )
  }
}

var rectangle = Routeguide_Rectangle()
rectangle.lo = point(0)
rectangle.hi = point(4)
let route = (0 ..< 10).map(point) + [point(100), point(200)]
let notes = ["A", "B", "C", "A", "B"].enumerated().map { index, place in
  var note = Routeguide_RouteNote()
  note.location = point(place == "A" ? 50 : place == "B" ? 51 : 52)
  note.message = "note \(index) at \(place)"
  return note
}

// Callbacks: each call object is started, written to and finished by the caller.
let unary = await collect { handler in
  client.getFeature(message: point(3), responseHandler: handler).start()
}
check(
  "callback GetFeature",
  unary.messages.first?.name == "Feature 3",
  "\(unary.messages.map(\.name)) \(unary.error?.message ?? "")"
)

let listed = await collect { handler in
  client.listFeatures(message: rectangle, responseHandler: handler).start()
}
check("callback ListFeatures", listed.messages.count == 5, "\(listed.messages.count) features")

let recorded = await collect { handler in
  let call = client.recordRoute(responseHandler: handler)
  call.start()
  for point in route { call.writeMessage(point) }
  call.finish()
}
let summary = recorded.messages.first
check(
  "callback RecordRoute",
  summary?.pointCount == 12 && summary?.featureCount == 10,
  "\(summary.map { "\($0.pointCount) points, \($0.featureCount) features" } ?? "none")"
)

let chatted = await collect { handler in
  let call = client.routeChat(responseHandler: handler)
  call.start()
  for note in notes { call.writeMessage(note) }
  call.finish()
}
check(
  "callback RouteChat",
  chatted.messages.map(\.message) == ["note 0 at A", "note 1 at B"],
  "\(chatted.messages.map(\.message))"
)

// async/await: the same four shapes.
do {
  let feature = try await client.getFeature(point(7))
  check("async GetFeature", feature.name == "Feature 7", feature.name)
  let empty = try await client.getFeature(point(100))
  check("async GetFeature, no feature", empty.name.isEmpty, "'\(empty.name)'")
  // The same call with the server's headers and trailers beside the typed response.
  let response = try await client.getFeatureResponse(point(7))
  let headers: Metadata = response.metadata
  check(
    "async GetFeature with metadata",
    response.message.name == "Feature 7"
      && headers[stringValues: "content-type"].contains { $0.hasPrefix("application/grpc") },
    "\(response.message.name), \(headers)"
  )

  let names = try await client.listFeatures(rectangle) { features in
    var names: [String] = []
    for try await feature in features { names.append(feature.name) }
    return names
  }
  check("async ListFeatures", names == (0 ..< 5).map { "Feature \($0)" }, "\(names)")

  let asyncSummary = try await client.recordRoute { writer in
    for point in route { try await writer.write(point) }
  }
  check(
    "async RecordRoute",
    asyncSummary.pointCount == 12 && asyncSummary.featureCount == 10,
    "\(asyncSummary.pointCount) points"
  )

  let replies = try await client.routeChat { writer in
    for note in notes { try await writer.write(note) }
  } body: { replies in
    var messages: [String] = []
    for try await reply in replies { messages.append(reply.message) }
    return messages
  }
  check("async RouteChat", replies == ["note 0 at A", "note 1 at B"], "\(replies)")
} catch {
  check("async calls", false, "\(error)")
}

print(failures == 0 ? "route guide: ok" : "route guide: \(failures) failed")
exit(failures == 0 ? 0 : 1)
