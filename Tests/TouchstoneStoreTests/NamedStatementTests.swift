import Foundation
import Logging
import PostgresNIO
import SQLKit
import Testing
@testable import TouchstoneStore

/// PostgreSQL runs a sign-in's statements as named prepared statements (parsed and planned once per connection).
struct NamedStatementTests {
    @Test(arguments: TestDatabase.available.filter(\.isPostgres))
    func hotStatementsArePreparedOnceAndSurviveAnAddedColumnAndAnError(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let executor = try await fixture.openExecutor()
            let store = SQLTouchstoneStore(executor: executor)
            do {
                try await store.migrate()
                try await store.insertUser(StoreTests.user("u1"))
                try await store.insertSession(StoreTests.session("t1", user: "u1"))
                // On one connection: a hot statement three times, then what that connection has prepared.
                let (prepared, answers) = try await executor.withDatabase { db in
                    var answers: [String] = []
                    let select: SQLQueryString = "SELECT \(unsafeRaw: SessionRecord.insertColumns) FROM sessions WHERE token_hash = \(bind: "t1")"
                    for _ in 0..<3 {
                        let rows = try await db.hot(select)
                        answers += try rows.map { try $0.decode(column: "user_id", as: String.self) }
                    }
                    let prepared = try await db.raw("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'touchstone_%'").all()
                        .map { try $0.decode(column: "statement", as: String.self) }
                    // Another instance's migration adds a column: the prepared statement names its columns, so
                    // PostgreSQL plans it again and its answer keeps its shape.
                    try await db.raw("ALTER TABLE sessions ADD COLUMN later TEXT").run()
                    answers += try await db.hot(select).map { try $0.decode(column: "user_id", as: String.self) }
                    // A hot statement that fails (a duplicate key) leaves the connection usable.
                    let insert: SQLQueryString = "INSERT INTO admin_keys (id, name, key_hash, created_at) VALUES (\(bind: "k"), \(bind: "n"), \(bind: "h"), \(bind: Int64(1)))"
                    _ = try await db.hot(insert)
                    await #expect(throws: (any Error).self) { _ = try await db.hot(insert) }
                    let rows = try await db.hot(select)
                    answers += try rows.map { try $0.decode(column: "user_id", as: String.self) }
                    return (prepared, answers)
                }
                #expect(answers == ["u1", "u1", "u1", "u1", "u1"])
                #expect(prepared.filter { $0.contains("FROM sessions WHERE token_hash") }.count == 1, "\(prepared)")
                #expect(try await store.session(tokenHash: "t1")?.userId == "u1")
            } catch {
                try await executor.shutdown()
                throw error
            }
            try await executor.shutdown()
        }
    }

    @Test(arguments: TestDatabase.available.filter(\.isPostgres))
    func preparedStatementsCanBeTurnedOffForPoolers(database: TestDatabase) async throws {
        guard case .postgres(let url) = database else { return }
        try await database.withFixture { fixture in
            let configuration = try PostgresExecutor.Configuration(
                url: TestDatabase.url(url, schema: fixture.schema) + "&prepared_statements=false"
            )
            #expect(!configuration.preparedStatements)
            let executor = try PostgresExecutor.open(configuration, logger: Logger(label: "test"))
            let store = SQLTouchstoneStore(executor: executor)
            do {
                try await store.migrate()
                try await store.insertUser(StoreTests.user("u1"))
                try await store.insertSession(StoreTests.session("t1", user: "u1"))
                let prepared = try await executor.withDatabase { db in
                    _ = try await db.hot("SELECT \(unsafeRaw: SessionRecord.insertColumns) FROM sessions WHERE token_hash = \(bind: "t1")")
                    return try await db.raw("SELECT count(*) AS n FROM pg_prepared_statements").first()?.decode(column: "n", as: Int64.self)
                }
                #expect(prepared == 0)
                #expect(try await store.session(tokenHash: "t1")?.userId == "u1")
            } catch {
                try await executor.shutdown()
                throw error
            }
            try await executor.shutdown()
        }
        #expect(try PostgresExecutor.Configuration(url: "postgres://u@h/d").preparedStatements)
        #expect(throws: StoreError.self) { try PostgresExecutor.Configuration(url: "postgres://u@h/d?prepared_statements=maybe") }
    }

    @Test func valuesOfTheHandledTypesAreBoundWithTheirTypesAndOthersAreLeftToTheUsualPath() {
        let values: [any Encodable & Sendable] = ["a", Int64(2), 3, String?.none, Int64?.none, Optional("b"), Optional(Int64(4))]
        let encoded = NamedStatement.bindings(values)
        #expect(encoded?.1 == [.text, .int8, .int8, .text, .int8, .text, .int8])
        #expect(NamedStatement.bindings([Double(1)]) == nil)
        #expect(NamedStatement.bindings([Bool?.none]) == nil)
    }
}
