import Testing
import TouchstoneOpenID

/// Query strings and form bodies as OAuth reads them (RFC 6749 §3.1: no parameter twice; empty means absent).
struct FormParametersTests {
    @Test func valuesAreDecoded() throws {
        let form = try FormParameters(urlEncoded: "a=1&b=two+words&c=%2Fpath%3Fx%3D1&d=&e&f=%C3%A9")
        #expect(try form.single("a") == "1")
        #expect(try form.single("b") == "two words")
        #expect(try form.single("c") == "/path?x=1")
        #expect(try form.single("d") == nil && form.contains("d"))
        #expect(try form.single("e") == nil && form.contains("e"))
        #expect(try form.single("f") == "é")
        #expect(try form.single("missing") == nil && !form.contains("missing"))
        #expect(try FormParameters(urlEncoded: "").pairs.isEmpty)
    }

    @Test func aRepeatedParameterIsInvalidRequestEvenIfEqual() throws {
        let form = try FormParameters(urlEncoded: "scope=openid&scope=openid")
        #expect(throws: OpenIDError.invalidRequest("")) { try form.single("scope") }
    }

    @Test func aMissingRequiredParameterIsNamed() throws {
        do {
            _ = try FormParameters(urlEncoded: "a=1").required("client_id")
            Issue.record("a missing parameter was accepted")
        } catch {
            #expect(error.code == "invalid_request" && error.reason == "parameter 'client_id' is missing")
        }
    }

    @Test(arguments: ["a=%", "a=%4", "a=%G0", "a=%FF", "a=%00", "a=%0A", "a=%C2%85", "%00=1"])
    func malformedOrControlCharactersAreInvalidRequest(text: String) {
        #expect(throws: OpenIDError.invalidRequest("")) { try FormParameters(urlEncoded: text) }
    }

    @Test func anOversizedValueIsInvalidRequest() {
        let text = "state=" + String(repeating: "x", count: FormParameters.maximumValueLength + 1)
        #expect(throws: OpenIDError.invalidRequest("")) { try FormParameters(urlEncoded: text) }
        #expect(throws: Never.self) { try FormParameters(urlEncoded: String(text.dropLast())) }
    }
}
