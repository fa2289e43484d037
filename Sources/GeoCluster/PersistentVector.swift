/// An array with value semantics whose copies share storage: a 32-ary trie, so that
/// changing one element of a copy copies the `O(log32 n)` nodes on its path instead of
/// the whole array. Snapshots of a live layer are cheap to derive this way: a writer
/// changes a copy, readers keep the version they hold.
public struct PersistentVector<Element: Sendable>: Sendable {
    struct Node: Sendable {
        var children: [Node] = []
        var items: [Element] = []
    }

    private var root = Node()
    /// Bits of the index consumed above the leaves: 0 while everything fits in one leaf.
    private var shift = 0
    public private(set) var count = 0

    static var branchBits: Int { 5 }
    static var branching: Int { 1 << branchBits }

    public init() {}

    public init(repeating element: Element, count: Int) {
        self.init()
        for _ in 0..<count { append(element) }
    }

    public subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "index \(index) out of range 0..<\(count)")
            return withUnsafePointer(to: root) { Self.get($0, shift: shift, index: index) }
        }
        set {
            precondition(index >= 0 && index < count, "index \(index) out of range 0..<\(count)")
            Self.set(&root, shift: shift, index: index, to: newValue)
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

    /// Through pointers, reading each node in place: passing node values down would
    /// retain and release both arrays of every node on the path.
    private static func get(_ node: UnsafePointer<Node>, shift: Int, index: Int) -> Element {
        if shift == 0 { return node.pointee.items[index & (branching - 1)] }
        return node.pointee.children.withUnsafeBufferPointer { children in
            get(children.baseAddress! + ((index >> shift) & (branching - 1)), shift: shift - branchBits, index: index)
        }
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
