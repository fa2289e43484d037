import Synchronization

/// A fixture's viewports, handed out in turn: each measured iteration of a viewport
/// benchmark takes the next one, so a run covers them all.
public final class ViewportCycle: Sendable {
    public let viewports: [PointSets.Viewport]
    private let cursor = Mutex(0)

    public init(_ viewports: [PointSets.Viewport]) {
        precondition(!viewports.isEmpty, "a cycle needs a viewport")
        self.viewports = viewports
    }

    public func next() -> PointSets.Viewport {
        cursor.withLock { next in
            defer { next += 1 }
            return viewports[next % viewports.count]
        }
    }
}
