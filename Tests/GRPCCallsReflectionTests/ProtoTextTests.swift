import GRPCCallsReflection
import SwiftProtobuf
import Testing

@Suite("Reflection: definitions printed as grpcurl prints them")
struct ProtoTextTests {
  typealias Field = Google_Protobuf_FieldDescriptorProto

  static func field(
    _ name: String,
    _ number: Int32,
    _ type: Field.TypeEnum,
    typeName: String = "",
    label: Field.Label = .optional,
    oneof: Int32? = nil,
    proto3Optional: Bool = false
  ) -> Field {
    var field = Field()
    field.name = name
    field.number = number
    field.type = type
    field.typeName = typeName
    field.label = label
    if let oneof { field.oneofIndex = oneof }
    field.proto3Optional = proto3Optional
    return field
  }

  /// `kv/store.proto`: a service, and a message with a map, a oneof, a proto3 `optional`, a
  /// nested message and a nested enum, declared out of canonical order.
  static var store: Google_Protobuf_FileDescriptorProto {
    var file = Google_Protobuf_FileDescriptorProto()
    file.name = "kv/store.proto"
    file.package = "kv"
    file.syntax = "proto3"

    var entry = Google_Protobuf_DescriptorProto()
    entry.name = "Entry"
    var labels = Google_Protobuf_DescriptorProto()
    labels.name = "LabelsEntry"
    labels.options.mapEntry = true
    labels.field = [
      Self.field("key", 1, .string), Self.field("value", 2, .message, typeName: ".kv.Entry.Inner"),
    ]
    var inner = Google_Protobuf_DescriptorProto()
    inner.name = "Inner"
    inner.field = [Self.field("note", 1, .string)]
    var kind = Google_Protobuf_EnumDescriptorProto()
    kind.name = "Kind"
    kind.value = [
      .with {
        $0.name = "SECOND"
        $0.number = 1
      },
      .with {
        $0.name = "FIRST"
        $0.number = 0
      },
    ]
    entry.nestedType = [labels, inner]
    entry.enumType = [kind]
    entry.oneofDecl = [.with { $0.name = "body" }, .with { $0.name = "_ttl" }]
    entry.field = [
      Self.field("text", 5, .string, oneof: 0),
      Self.field("labels", 3, .message, typeName: ".kv.Entry.LabelsEntry", label: .repeated),
      Self.field("key", 1, .string),
      Self.field("raw", 4, .bytes, oneof: 0),
      Self.field("ttl", 2, .int32, oneof: 1, proto3Optional: true),
      Self.field("kind", 6, .enum, typeName: ".kv.Entry.Kind"),
      Self.field("tags", 7, .string, label: .repeated),
    ]

    var service = Google_Protobuf_ServiceDescriptorProto()
    service.name = "Store"
    service.method = [
      .with {
        $0.name = "Watch"
        $0.inputType = ".kv.Entry"
        $0.outputType = ".kv.Entry"
        $0.serverStreaming = true
      },
      .with {
        $0.name = "Get"
        $0.inputType = ".kv.Entry"
        $0.outputType = ".kv.Entry"
      },
    ]
    file.messageType = [entry]
    file.service = [service]
    return file
  }

  @Test("a service: methods by name, streams marked, types fully qualified")
  func service() {
    let text = GRPCProtoText(files: [Self.store])
    #expect(
      text.describe("kv.Store") == """
        kv.Store is a service:
        service Store {
          rpc Get ( .kv.Entry ) returns ( .kv.Entry );
          rpc Watch ( .kv.Entry ) returns ( stream .kv.Entry );
        }
        """
    )
    #expect(text.methods(of: "kv.Store") == ["kv.Store.Get", "kv.Store.Watch"])
    #expect(
      text.describe(".kv.Store.Watch")
        == "kv.Store.Watch is a method:\nrpc Watch ( .kv.Entry ) returns ( stream .kv.Entry );"
    )
  }

  @Test(
    "a message: fields by number, a oneof where its first field stands, maps, proto3 optional, nested types"
  )
  func message() {
    #expect(
      GRPCProtoText(files: [Self.store]).describe("kv.Entry") == """
        kv.Entry is a message:
        message Entry {
          string key = 1;
          optional int32 ttl = 2;
          map<string, .kv.Entry.Inner> labels = 3;
          oneof body {
            bytes raw = 4;
            string text = 5;
          }
          .kv.Entry.Kind kind = 6;
          repeated string tags = 7;
          message Inner {
            string note = 1;
          }
          enum Kind {
            FIRST = 0;
            SECOND = 1;
          }
        }
        """
    )
  }

  @Test("a nested enum by its full name; proto2's optional label; an unknown symbol is nil")
  func edges() {
    var legacy = Self.store
    legacy.syntax = "proto2"
    legacy.messageType[0].nestedType[1].field[0].label = .optional
    let text = GRPCProtoText(files: [legacy])
    #expect(
      text.describe("kv.Entry.Kind")
        == "kv.Entry.Kind is an enum:\nenum Kind {\n  FIRST = 0;\n  SECOND = 1;\n}"
    )
    #expect(
      text.describe("kv.Entry.Inner")
        == "kv.Entry.Inner is a message:\nmessage Inner {\n  optional string note = 1;\n}"
    )
    #expect(text.describe("kv.Missing") == nil)
    #expect(text.methods(of: "kv.Entry") == nil)
  }

  @Test("a oneof index the message does not declare prints, not traps")
  func hostileOneofIndex() {
    var file = Self.store
    file.messageType[0].field.append(Self.field("odd", 9, .bool, oneof: 7))
    #expect(GRPCProtoText(files: [file]).describe("kv.Entry")?.contains("oneof oneof_7 {") == true)
  }
}
