/// An array with value semantics whose copies share storage: a 32-ary trie, so that
/// changing one element of a copy copies the `O(log32 n)` nodes on its path instead of
/// the whole array. Snapshots of a live layer are cheap to derive this way: a writer
/// changes a copy, readers keep the version they hold.
///
/// Reads are inlinable, so that other modules get them specialized for their element
/// type: unspecialized, every step retains and releases what it passes through.
public struct PersistentVector<Element: Sendable>: Sendable {
    @usableFromInline
    struct Node: Sendable {
        @usableFromInline var children: [Node] = []
        @usableFromInline var items: [Element] = []

        @usableFromInline
        init(children: [Node] = [], items: [Element] = []) {
            self.children = children
            self.items = items
        }
    }

    @usableFromInline var root = Node()
    /// Bits of the index consumed above the leaves: 0 while everything fits in one leaf.
    @usableFromInline var shift = 0
    public private(set) var count = 0

    @usableFromInline static var branchBits: Int { 5 }
    @usableFromInline static var branching: Int { 1 << branchBits }

    public init() {}

    public init(repeating element: Element, count: Int) {
        self.init()
        for _ in 0..<count { append(element) }
    }

    /// The elements of `elements` in order, built level by level: the shape that
    /// appending them one by one gives, without walking down the trie for each.
    /// Inlinable, so that the loop over the elements is specialized where it is called.
    @inlinable
    public init(_ elements: some Sequence<Element>) {
        var leaves: [Node] = []
        var items: [Element] = []
        items.reserveCapacity(Self.branching)
        var count = 0
        for element in elements {
            items.append(element)
            count += 1
            if items.count == Self.branching {
                leaves.append(Node(items: items))
                items = []
                items.reserveCapacity(Self.branching)
            }
        }
        if !items.isEmpty { leaves.append(Node(items: items)) }
        self.init(leaves: leaves, count: count)
    }

    /// The elements of `leafItems` in order, each array kept as a leaf's storage (shared,
    /// not copied); `nil` unless every array but the last holds exactly 32 elements and
    /// the last 1 to 32.
    public init?(leafItems: [[Element]]) {
        var count = 0
        for (position, items) in leafItems.enumerated() {
            guard items.count == Self.branching || (position == leafItems.count - 1 && (1...Self.branching).contains(items.count))
            else { return nil }
            count += items.count
        }
        self.init(leaves: leafItems.map { Node(items: $0) }, count: count)
    }

    /// How many elements a leaf holds (``init(leafItems:)``).
    public static var leafCapacity: Int { branching }

    /// A vector of full leaves (the last one may be partial), in order, holding `count`
    /// elements: the levels above them are added until one node is the root.
    @usableFromInline
    init(leaves: [Node], count: Int) {
        self.init()
        guard !leaves.isEmpty else { return }
        var level = leaves
        var shift = 0
        while level.count > 1 {
            var parents: [Node] = []
            parents.reserveCapacity((level.count + Self.branching - 1) / Self.branching)
            for start in stride(from: 0, to: level.count, by: Self.branching) {
                parents.append(Node(children: Array(level[start..<min(start + Self.branching, level.count)])))
            }
            level = parents
            shift += Self.branchBits
        }
        root = level[0]
        self.shift = shift
        self.count = count
    }

    public subscript(index: Int) -> Element {
        @inlinable get { withElement(at: index) { $0.pointee } }
        set {
            precondition(index >= 0 && index < count, "index \(index) out of range 0..<\(count)")
            Self.set(&root, shift: shift, index: index, to: newValue)
        }
    }

    /// Calls `body` with the element at `index` where it is stored, without copying it:
    /// a caller that reads one member of a large element retains only what it takes.
    ///
    /// The path down is followed by addresses inside the nodes' arrays, with no node
    /// value copied on the way: reading each level through a closure copied the node's
    /// two arrays (a retain and a release each, on objects every reader of the vector
    /// shares, so the two cores fought over their counts while writing answers). The
    /// addresses stay valid for the call: `root` keeps every node alive and this value is
    /// not changed meanwhile (a change to a copy copies the nodes it touches).
    @inlinable
    public func withElement<Result>(at index: Int, _ body: (UnsafePointer<Element>) throws -> Result) rethrows -> Result {
        precondition(index >= 0 && index < count, "index \(index) out of range 0..<\(count)")
        let mask = Self.branching - 1
        return try withExtendedLifetime(root) { () throws -> Result in
            if shift == 0 {
                return try root.items.withUnsafeBufferPointer { try body($0.baseAddress! + (index & mask)) }
            }
            var node = root.children.withUnsafeBufferPointer { $0.baseAddress! + ((index >> shift) & mask) }
            var level = shift - Self.branchBits
            while level > 0 {
                let at = (index >> level) & mask
                node = node.pointee.children.withUnsafeBufferPointer { $0.baseAddress! + at }
                level -= Self.branchBits
            }
            return try body(node.pointee.items.withUnsafeBufferPointer { $0.baseAddress! + (index & mask) })
        }
    }

    public mutating func append(_ element: Element) {
        if count == Self.branching << shift {
            // Full: a new root above the old one.
            let old = root
            root = Node(children: [old])
            shift += Self.branchBits
        }
        Self.append(&root, shift: shift, index: count, element)
        count += 1
    }

    private static func set(_ node: inout Node, shift: Int, index: Int, to element: Element) {
        if shift == 0 {
            node.items[index & (branching - 1)] = element
            return
        }
        set(&node.children[(index >> shift) & (branching - 1)], shift: shift - branchBits, index: index, to: element)
    }

    private static func append(_ node: inout Node, shift: Int, index: Int, _ element: Element) {
        if shift == 0 {
            node.items.append(element)
            return
        }
        let child = (index >> shift) & (branching - 1)
        if child == node.children.count { node.children.append(Node()) }
        append(&node.children[child], shift: shift - branchBits, index: index, element)
    }
}
