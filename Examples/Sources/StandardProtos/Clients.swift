import GRPCCalls
import SwiftProtobuf

// The build plugin's output for protos as real services have them (well-known types, a proto
// without services, protos importing each other across folders, two files named
// reflection.proto, Swift keywords as names), used as an app would: this target builds only
// if all of it compiles.

/// Pings a key-value store with `google.protobuf.Empty`, then reads an entry whose fields are
/// well-known types.
func readEntry(host: String) async throws -> Common_Entry {
  let store = Kv_KeyValue(host: host)
  _ = try await store.ping(Google_Protobuf_Empty())
  var key = Kv_Key()
  key.key = "greeting"
  let entry = try await store.get(key)
  _ = entry.updated.date
  _ = entry.ttl.seconds
  _ = entry.labels.fields
  _ = entry.mask.paths
  var protocolMessage = Kv_Protocol()
  protocolMessage.class = "keyword"
  _ = try await store.return(protocolMessage)
  return entry
}

/// Both versions of the reflection service, side by side.
func reflectionClients(
  host: String
) -> (Grpc_Reflection_V1_ServerReflection, Grpc_Reflection_V1alpha_ServerReflection) {
  (
    Grpc_Reflection_V1_ServerReflection(host: host),
    Grpc_Reflection_V1alpha_ServerReflection(host: host)
  )
}
