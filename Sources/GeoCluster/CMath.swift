// The C math library (sin, log, exp) is the only platform import of the core:
// the Swift standard library has no transcendental functions of its own.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Transcendental functions used by the projection and the kd-sort, gathered here so that the
/// rest of the core does not import a platform module.
enum CMath {
    @inline(__always) static func sin(_ x: Double) -> Double { platformSin(x) }
    @inline(__always) static func log(_ x: Double) -> Double { platformLog(x) }
    @inline(__always) static func exp(_ x: Double) -> Double { platformExp(x) }
}

@inline(__always) private func platformSin(_ x: Double) -> Double { sin(x) }
@inline(__always) private func platformLog(_ x: Double) -> Double { log(x) }
@inline(__always) private func platformExp(_ x: Double) -> Double { exp(x) }
