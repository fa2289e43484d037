import GeoProjection
import Testing

@Suite struct GeodesicTests {
    let seoul = Fixtures.geographic(Fixtures.seoulStation)
    let busan = Fixtures.geographic(Fixtures.busanStation)

    @Test func seoulToBusanMatchesGeodTool() {
        #expect(abs(Geodesic.wgs84.distanceMeters(from: seoul, to: busan) - Fixtures.seoulToBusanMeters) < 0.001)
        let solution = Geodesic.wgs84.inverse(from: seoul, to: busan)
        #expect(abs(solution.distanceMeters - Fixtures.seoulToBusanMeters) < 0.001)
        #expect(abs(solution.initialAzimuthDegrees - Fixtures.seoulToBusanInitialAzimuthDegrees) < 0.001)
    }

    @Test func oneDegreeAlongTheEquator() {
        let distance = Geodesic.wgs84.distanceMeters(
            from: GeographicPoint(longitudeDegrees: 0, latitudeDegrees: 0),
            to: GeographicPoint(longitudeDegrees: 1, latitudeDegrees: 0))
        #expect(abs(distance - Fixtures.equatorDegreeMeters) < 0.001)
    }

    @Test func destinationInvertsInverse() {
        let solution = Geodesic.wgs84.inverse(from: seoul, to: busan)
        let reached = Geodesic.wgs84.destination(
            from: seoul, azimuthDegrees: solution.initialAzimuthDegrees, distanceMeters: solution.distanceMeters)
        #expect(abs(reached.longitudeDegrees - busan.longitudeDegrees) < 1e-9)
        #expect(abs(reached.latitudeDegrees - busan.latitudeDegrees) < 1e-9)
    }

    @Test func destinationWrapsAcrossTheAntimeridian() {
        let start = GeographicPoint(longitudeDegrees: 179.5, latitudeDegrees: 0)
        let reached = Geodesic.wgs84.destination(
            from: start, azimuthDegrees: 90, distanceMeters: Fixtures.equatorDegreeMeters)
        #expect(abs(reached.longitudeDegrees - -179.5) < 1e-6)
        #expect(abs(reached.latitudeDegrees) < 1e-9)
    }

    @Test func haversineIsWithinHalfAPercentOfGeodesic() {
        let haversine = Geodesic.haversineMeters(from: seoul, to: busan)
        let geodesic = Geodesic.wgs84.distanceMeters(from: seoul, to: busan)
        #expect(abs(haversine - geodesic) / geodesic < 0.005)
    }

    @Test func zeroDistanceAndAntipodes() {
        #expect(Geodesic.wgs84.distanceMeters(from: seoul, to: seoul) == 0)
        #expect(Geodesic.haversineMeters(from: seoul, to: seoul) == 0)
        let antipode = GeographicPoint(
            longitudeDegrees: seoul.longitudeDegrees - 180, latitudeDegrees: -seoul.latitudeDegrees)
        let halfCircumference = Geodesic.meanEarthRadiusMeters * .pi
        #expect(abs(Geodesic.haversineMeters(from: seoul, to: antipode) - halfCircumference) < 0.01)
        // The ellipsoidal antipodal distance lies between the polar and equatorial half-meridians.
        let ellipsoidal = Geodesic.wgs84.distanceMeters(from: seoul, to: antipode)
        #expect(ellipsoidal > 19_990_000 && ellipsoidal < 20_040_000)
    }

    /// `Geodesic` is Sendable: one value shared by concurrent tasks gives the same answers.
    @Test func sharedAcrossTasks() async {
        let geodesic = Geodesic.wgs84
        let (seoul, busan) = (seoul, busan)
        let distances = await withTaskGroup(of: Double.self) { group in
            for _ in 0..<4 {
                group.addTask { geodesic.distanceMeters(from: seoul, to: busan) }
            }
            var distances: [Double] = []
            for await distance in group {
                distances.append(distance)
            }
            return distances
        }
        #expect(distances.count == 4)
        #expect(Set(distances).count == 1)
    }
}
