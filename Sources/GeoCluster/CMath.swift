// The C math library (sin, cos, asin, log, exp) is the core's platform import for
// arithmetic (the others: BackgroundJob's, for the core count and yielding, and
// HeapTrim's, for malloc_trim): the Swift standard library has no transcendental
// functions of its own.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Transcendental functions used by the projection, the kd-sort and the great-circle
/// distances of reachability, gathered here so that the rest of the core does not import a
/// platform module.
package enum CMath {
    @inline(__always) package static func sin(_ x: Double) -> Double { platformSin(x) }
    @inline(__always) package static func cos(_ x: Double) -> Double { platformCos(x) }
    @inline(__always) package static func asin(_ x: Double) -> Double { platformAsin(x) }
    @inline(__always) package static func log(_ x: Double) -> Double { platformLog(x) }
    @inline(__always) package static func exp(_ x: Double) -> Double { platformExp(x) }
}

@inline(__always) private func platformSin(_ x: Double) -> Double { sin(x) }
@inline(__always) private func platformCos(_ x: Double) -> Double { cos(x) }
@inline(__always) private func platformAsin(_ x: Double) -> Double { asin(x) }
@inline(__always) private func platformLog(_ x: Double) -> Double { log(x) }
@inline(__always) private func platformExp(_ x: Double) -> Double { exp(x) }
