import Testing
import TouchstoneWebhooks

struct IPAddressTests {
    @Test(arguments: [
        ("127.0.0.1", IPAddress.Range.loopback), ("127.255.0.9", .loopback), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
        ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
        ("100.64.0.1", .private), ("0.0.0.0", .private), ("::", .private), ("255.255.255.255", .private), ("224.0.0.1", .private),
        ("::ffff:10.0.0.1", .private), ("::ffff:a00:1", .private), ("64:ff9b::10.0.0.1", .private), ("2002:c0a8:101::1", .private),
        ("169.254.169.254", .linkLocal), ("fe80::1", .linkLocal), ("::ffff:169.254.169.254", .linkLocal),
        ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal),
        ("93.184.216.34", .public), ("172.32.0.1", .public), ("2606:4700::1111", .public), ("::ffff:8.8.8.8", .public),
    ])
    func classifies(_ text: String, _ range: IPAddress.Range) throws {
        #expect(try #require(IPAddress(text)).range == range)
    }

    @Test(arguments: ["", "1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "1::2::3", "12345::", "::g", "[::1]", "fe80::1%eth0", "1.2.3.4 "])
    func refusesWhatIsNotAnAddress(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func printsCanonicalForms() throws {
        #expect(try #require(IPAddress("2001:0db8:0000:0000:0000:0000:0000:0001")).description == "2001:db8::1")
        #expect(try #require(IPAddress("::ffff:10.0.0.1")).description == "::ffff:a00:1")
        #expect(try #require(IPAddress("10.0.0.1")).description == "10.0.0.1")
    }
}

struct DestinationPolicyTests {
    @Test(arguments: [
        "https://hooks.example.com/touchstone", "https://hooks.example.com:8443/a?b=c", "https://93.184.216.34/x", "https://[2606:4700::1111]/",
    ])
    func acceptsPublicHTTPS(_ url: String) throws {
        _ = try DestinationPolicy().validate(url)
    }

    @Test(arguments: [
        ("http://hooks.example.com/", "uses http"),
        ("ftp://hooks.example.com/", "scheme 'ftp'"),
        ("https://user:pw@hooks.example.com/", "user information"),
        ("https://hooks.example.com/#x", "fragment"),
        ("https://hooks.example.com:0/", "invalid port"),
        ("https://hooks.example.com:99999/", "invalid port"),
        ("https:///path", "no valid host"),
        ("https://exa mple.com/", "white space"),
        ("https://localhost/", "names localhost"),
        ("https://api.localhost/", "names localhost"),
        ("https://127.0.0.1/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://10.0.0.8/", "private"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://[fd00::1]/", "unique-local"),
        ("https://[::ffff:192.168.0.1]/", "private"),
        ("https://2130706433/", "not a dotted quad"),
        ("https://0x7f.1/", "not a dotted quad"),
        ("https://127.1/", "not a dotted quad"),
        ("hooks.example.com", "not an absolute URL"),
    ])
    func refuses(_ url: String, _ because: String) {
        #expect {
            try DestinationPolicy().validate(url)
        } throws: { error in
            (error as? WebhookError)?.code == .invalidURL && (error as? WebhookError)?.message.contains(because) == true
        }
    }

    @Test func loopbackAndPrivateNeedTheOperatorsLeave() throws {
        let loopback = DestinationPolicy(allowPrivate: .loopback)
        _ = try loopback.validate("http://127.0.0.1:9000/hook")
        _ = try loopback.validate("http://localhost:9000/hook")
        #expect(throws: WebhookError.self) { try loopback.validate("https://10.0.0.1/") }
        #expect(throws: WebhookError.self) { try loopback.validate("http://hooks.example.com/") }
        let all = DestinationPolicy(allowHTTP: true, allowPrivate: .all)
        _ = try all.validate("http://10.0.0.1/")
        _ = try all.validate("http://hooks.example.com/")
        // Loopback http is allowed, but the destination still needs the private leave.
        #expect(throws: WebhookError.self) { try DestinationPolicy().validate("http://127.0.0.1/") }
    }

    @Test func deliveryChecksEveryResolvedAddress() throws {
        let policy = DestinationPolicy()
        #expect(policy.refusal(for: try #require(IPAddress("93.184.216.34"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("10.0.0.1")))?.contains("10.0.0.1 is a private address") == true)
        #expect(DestinationPolicy(allowPrivate: .loopback).refusal(for: try #require(IPAddress("::1"))) == nil)
    }

    @Test func parsesHostAndPort() throws {
        let url = try DestinationPolicy().validate("https://Hooks.Example.com.:8443/x")
        #expect(url.host == "hooks.example.com")
        #expect(url.port == 8443)
        #expect(try DestinationPolicy().validate("https://[2606:4700::1111]/").port == 443)
    }
}
