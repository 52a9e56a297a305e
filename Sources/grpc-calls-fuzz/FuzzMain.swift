internal import Foundation

#if GRPC_CALLS_FUZZING
/// libFuzzer's entry point (built with `-sanitize=fuzzer`; see scripts/fuzz.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  FuzzChecks.check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
  return 0
}
#else
/// Without the fuzzer: runs the inputs in the files and directories given (a saved crash, the
/// committed corpus) through the same checks, to reproduce a finding in a plain build.
@main
struct FuzzReplay {
  static func main() throws {
    var count = 0
    for argument in CommandLine.arguments.dropFirst() {
      for file in try Self.files(at: argument) {
        FuzzChecks.check(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        count += 1
      }
    }
    print("\(count) inputs checked, every property held")
  }

  private static func files(at path: String) throws -> [String] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    guard isDirectory.boolValue else { return [path] }
    return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map {
      "\(path)/\($0)"
    }
  }
}
#endif
