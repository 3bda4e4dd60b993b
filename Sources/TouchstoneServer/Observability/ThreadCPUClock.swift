#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's CPU time so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): what a piece of work cost this
/// thread, not counting the time it was preempted.
func threadCPUNanoseconds() -> Int {
    // A timespec is two words (seconds, nanoseconds) on the 64-bit platforms this runs on, and read as such: with
    // member import visibility, its initializer and fields resolve to CoreFoundation's copy, which this file does not
    // import.
    assert(MemoryLayout<timespec>.size == MemoryLayout<(Int, Int)>.size)
    var time: (seconds: Int, nanoseconds: Int) = (0, 0)
    withUnsafeMutablePointer(to: &time) { pointer in
        pointer.withMemoryRebound(to: timespec.self, capacity: 1) { _ = clock_gettime(CLOCK_THREAD_CPUTIME_ID, $0) }
    }
    return time.seconds &* 1_000_000_000 &+ time.nanoseconds
}
