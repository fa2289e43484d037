import GeoCluster
import GeoClusterWire

/// The language of the words in a reachability answer: its `reason` and the labels of
/// place categories. Codes (`status`, `category`, error codes) never change with it.
public enum ReachabilityLanguage: String, Sendable, Hashable, CaseIterable {
    case english = "en"
    case korean = "ko"

    /// The label of a place category: the category itself when it has none.
    public func label(ofCategory category: String) -> String {
        let labels = switch self {
        case .english: Self.englishLabels
        case .korean: Self.koreanLabels
        }
        return labels[category] ?? category
    }

    /// The category a label names, in either language, whatever its case: `카페`, `Cafe`
    /// and `CAFE` give `cafe`; `nil` for any other text.
    public static func category(labelled label: String) -> String? {
        let key = label.lowercased()
        for labels in [englishLabels, koreanLabels] {
            if let (category, _) = labels.first(where: { $0.value.lowercased() == key }) { return category }
        }
        return nil
    }

    static let englishLabels: [String: String] = [
        "cafe": "Cafe", "restaurant": "Restaurant", "attraction": "Attraction", "park": "Park",
        "market": "Market", "museum": "Museum", "viewpoint": "Viewpoint", "shopping": "Shop",
        "temple": "Temple", "beach": "Beach", "convenience": "Convenience store", "city": "City",
    ]

    static let koreanLabels: [String: String] = [
        "cafe": "카페", "restaurant": "식당", "attraction": "명소", "park": "공원",
        "market": "시장", "museum": "박물관", "viewpoint": "전망대", "shopping": "쇼핑",
        "temple": "사찰", "beach": "해변", "convenience": "편의점", "city": "도시",
    ]

    /// The language a `lang` value or an `Accept-Language` tag names (`ko`, `ko-KR`, `en-US`),
    /// if it is one of these.
    public init?(tag: some StringProtocol) {
        let primary = tag.split(maxSplits: 1, whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        guard let language = Self(rawValue: primary) else { return nil }
        self = language
    }
}
