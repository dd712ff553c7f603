// What the agent's journal holds (``AgentStore``): a live toast as it is saved, and the records appended to the
// journal as toasts come, change and end.
extension AgentStore {
    /// One live toast.
    package struct Saved: Codable, Sendable, Equatable {
        /// The toast as its sender gave it.
        package var request: AgentRequest
        /// Its id in the agent's center.
        package var id: String
        /// The server's id for it, when it was on screen.
        package var serverID: UInt32?
        /// The unique bus name of the server that gave ``serverID`` (`:1.7`): the id is adopted only while that
        /// server owns the name (nil in files written before it was kept: adopted as before).
        package var server: String?
        /// Its remaining time in seconds at `at` (nil for a toast without a time limit).
        package var remaining: Double?
        /// Whether its timer ran at `at` (then the time since counts against it).
        package var running: Bool

        package enum CodingKeys: String, CodingKey {
            case request, id, running, remaining
            case serverID = "server_id"
            case server = "server_name"
        }

        /// A toast to save; `server` is the unique bus name of the server that gave `serverID`.
        package init(
            request: AgentRequest, id: String, serverID: UInt32?, server: String? = nil, remaining: Double?,
            running: Bool
        ) {
            self.request = request
            self.id = id
            self.serverID = serverID
            self.server = serverID == nil ? nil : server
            self.remaining = remaining
            self.running = running
        }

        /// The request in its disk form (``SavedRequest``), checked as it is read.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            serverID = try container.decodeIfPresent(UInt32.self, forKey: .serverID)
            server = try container.decodeIfPresent(String.self, forKey: .server)
            remaining = try container.decodeIfPresent(Double.self, forKey: .remaining)
            running = try container.decode(Bool.self, forKey: .running)
            do {
                request = try container.decode(SavedRequest.self, forKey: .request).request()
            } catch let error as SavedRequest.Invalid {
                throw Refusal(description: "toast \"\(id)\": \(error.description) is not valid")
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(serverID, forKey: .serverID)
            try container.encodeIfPresent(server, forKey: .server)
            try container.encodeIfPresent(remaining, forKey: .remaining)
            try container.encode(running, forKey: .running)
            try container.encode(SavedRequest(request), forKey: .request)
        }
    }

    /// One line of the journal, with its own keys (never a type of the command line's).
    package struct Record: Codable, Sendable, Equatable {
        /// `put`, `server`, `timer` or `end`.
        package var op: String
        /// When, in seconds since 1970.
        package var at: Double
        /// `put`: the toast.
        package var toast: Saved?
        /// `server`, `timer`, `end`: the toast's id.
        package var id: String?
        /// `server`: its server id, and the unique bus name of the server that gave it.
        package var serverID: UInt32?
        package var server: String?
        /// `timer`: its remaining time (nil: no limit) and whether its timer runs.
        package var remaining: Double?
        package var running: Bool?

        package enum CodingKeys: String, CodingKey {
            case op, at, toast, id, remaining, running
            case serverID = "server_id"
            case server = "server_name"
        }

        /// The toast is presented, or replaced (the whole toast, as it is now).
        package static func put(_ toast: Saved, at: Double = AgentStore.now()) -> Record {
            Record(op: "put", at: at, toast: toast)
        }

        /// The server accepted the toast with `serverID`; `server` is that server's unique bus name.
        package static func server(
            _ id: String, _ serverID: UInt32, server: String? = nil, at: Double = AgentStore.now()
        ) -> Record {
            Record(op: "server", at: at, id: id, serverID: serverID, server: server)
        }

        /// The toast's timer started or stopped with `remaining` seconds left.
        package static func timer(_ id: String, remaining: Double?, running: Bool, at: Double = AgentStore.now())
            -> Record
        {
            Record(op: "timer", at: at, id: id, remaining: remaining, running: running)
        }

        /// The toast ended.
        package static func end(_ id: String, at: Double = AgentStore.now()) -> Record {
            Record(op: "end", at: at, id: id)
        }
    }
}
