import Foundation

/// The fuzz target this process runs: `TOUCHSTONE_FUZZ_TARGET` (libFuzzer owns the command line).
let selectedTarget: FuzzTarget? = ProcessInfo.processInfo.environment["TOUCHSTONE_FUZZ_TARGET"].flatMap(FuzzTarget.init(rawValue:))

/// libFuzzer's callback.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = selectedTarget else {
        fatalError("set TOUCHSTONE_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    target.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if FUZZING
import CFuzzDriver

/// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz.sh): libFuzzer's driver is the program. SwiftPM names an
/// executable's entry point `<module>_main`, so that is what this defines.
@_cdecl("touchstone_fuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    // Statics (fixed keys, the relying party) are created once, before libFuzzer starts counting allocations: they
    // live for the whole process and are not leaks.
    selectedTarget?.run([])
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzTestOneInput(data, size) }
}
#else

/// A normal build replays inputs: `touchstone-fuzz <target> <file or directory>...`, so the committed corpus runs
/// as a regression test without the fuzzing toolchain.
@main
struct Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count >= 2 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: touchstone-fuzz <\(names)> <file or directory>...\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no such file: \(path)\n".utf8))
                exit(2)
            }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" } : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target.run(Array(data))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs, no crash")
    }
}
#endif
