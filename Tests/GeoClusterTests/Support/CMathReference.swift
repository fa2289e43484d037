#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's functions, as an independent reference for the core's own.
enum CMathReference {
    static func exp(_ x: Double) -> Double { platformExp(x) }
    static func atan(_ x: Double) -> Double { platformAtan(x) }
}

private func platformExp(_ x: Double) -> Double { exp(x) }
private func platformAtan(_ x: Double) -> Double { atan(x) }
