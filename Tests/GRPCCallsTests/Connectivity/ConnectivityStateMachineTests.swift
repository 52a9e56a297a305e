import Testing

@testable import GRPCCalls

@Suite("Connectivity state machine (no I/O)")
struct ConnectivityStateMachineTests {
  /// A machine with a started channel, and its ID.
  private func started() -> (ConnectivityStateMachine, channel: Int) {
    var machine = ConnectivityStateMachine()
    let channel = machine.makeChannelID()
    #expect(machine.channelStarted(channel) == nil)
    return (machine, channel)
  }

  @Test("IDLE → CONNECTING → READY, then IDLE when the connection closes with no calls")
  func connectThenCleanClose() {
    var (machine, channel) = self.started()
    #expect(machine.state == .idle)
    let (connection, change) = machine.attemptStarted(channel: channel)
    #expect(change == .connecting)
    let id = connection
    #expect(machine.established(channel: channel, connection: id) == .ready)
    #expect(
      machine.closed(channel: channel, connection: id, established: true, broke: false) == .idle
    )
    #expect(machine.isDormant)
  }

  @Test("a GOAWAY takes the connection out of READY before it closes")
  func goAway() {
    var (machine, channel) = self.started()
    let id = machine.attemptStarted(channel: channel).connection
    _ = machine.established(channel: channel, connection: id)
    #expect(machine.wentAway(channel: channel, connection: id) == .idle)
    #expect(
      machine.closed(channel: channel, connection: id, established: true, broke: false) == nil
    )
  }

  @Test("a successor connecting during a GOAWAY keeps the channel CONNECTING, then READY")
  func successor() {
    var (machine, channel) = self.started()
    let old = machine.attemptStarted(channel: channel).connection
    _ = machine.established(channel: channel, connection: old)
    let (new, change) = machine.attemptStarted(channel: channel)
    #expect(change == nil)  // still READY on the old one
    #expect(machine.wentAway(channel: channel, connection: old) == .connecting)
    #expect(machine.established(channel: channel, connection: new) == .ready)
    #expect(
      machine.closed(channel: channel, connection: old, established: true, broke: false) == nil
    )
  }

  @Test("a failed attempt is TRANSIENT_FAILURE, sticky through further attempts, until READY")
  func stickyTransientFailure() {
    var (machine, channel) = self.started()
    let first = machine.attemptStarted(channel: channel).connection
    #expect(
      machine.closed(channel: channel, connection: first, established: false, broke: false)
        == .transientFailure
    )
    let (second, change) = machine.attemptStarted(channel: channel)
    #expect(change == nil)
    #expect(machine.state == .transientFailure)
    #expect(
      machine.closed(channel: channel, connection: second, established: false, broke: false) == nil
    )
    let third = machine.attemptStarted(channel: channel).connection
    #expect(machine.established(channel: channel, connection: third) == .ready)
  }

  @Test("a connection that breaks under calls is TRANSIENT_FAILURE")
  func brokeUnderCalls() {
    var (machine, channel) = self.started()
    let id = machine.attemptStarted(channel: channel).connection
    _ = machine.established(channel: channel, connection: id)
    #expect(
      machine.closed(channel: channel, connection: id, established: true, broke: true)
        == .transientFailure
    )
    #expect(!machine.isDormant)
  }

  @Test("READY while any connection is: one of two closing changes nothing")
  func twoConnections() {
    var (machine, channel) = self.started()
    let a = machine.attemptStarted(channel: channel).connection
    let b = machine.attemptStarted(channel: channel).connection
    #expect(machine.established(channel: channel, connection: a) == .ready)
    #expect(
      machine.closed(channel: channel, connection: b, established: false, broke: false) == nil
    )
    #expect(machine.state == .ready)
    #expect(
      machine.closed(channel: channel, connection: a, established: true, broke: false)
        == .transientFailure  // b's failed attempt since READY
    )
  }

  @Test("closing the channel makes it IDLE and clears a failure; its late events change nothing")
  func channelClosed() {
    var (machine, channel) = self.started()
    let id = machine.attemptStarted(channel: channel).connection
    _ = machine.closed(channel: channel, connection: id, established: false, broke: false)
    let late = machine.attemptStarted(channel: channel).connection
    #expect(machine.channelClosed(channel) == .idle)
    #expect(!machine.isDormant)
    #expect(machine.established(channel: channel, connection: late) == nil)
    let after = machine.attemptStarted(channel: channel)
    #expect(after.change == nil)
    #expect(machine.established(channel: channel, connection: after.connection) == nil)
    #expect(machine.channelClosed(channel) == nil)
    #expect(machine.state == .idle)
  }

  @Test("only the started channel counts: one that lost the race to open reports nothing")
  func otherChannel() {
    var (machine, channel) = self.started()
    let loser = machine.makeChannelID()
    let lost = machine.attemptStarted(channel: loser)
    #expect(lost.change == nil)
    #expect(machine.established(channel: loser, connection: lost.connection) == nil)
    #expect(machine.channelClosed(loser) == nil)
    #expect(machine.attemptStarted(channel: channel).change == .connecting)
  }

  @Test("a new channel starts IDLE, whatever the old one left")
  func newChannel() {
    var (machine, old) = self.started()
    let id = machine.attemptStarted(channel: old).connection
    _ = machine.established(channel: old, connection: id)
    let new = machine.makeChannelID()
    #expect(machine.channelStarted(new) == .idle)
    #expect(machine.closed(channel: old, connection: id, established: true, broke: true) == nil)
    #expect(machine.state == .idle)
    #expect(!machine.isDormant)
  }

  @Test("SHUTDOWN is final")
  func shutdown() {
    var (machine, channel) = self.started()
    let id = machine.attemptStarted(channel: channel).connection
    #expect(machine.shutDown() == .shutdown)
    #expect(machine.shutDown() == nil)
    #expect(machine.established(channel: channel, connection: id) == nil)
    #expect(machine.channelClosed(channel) == nil)
    #expect(machine.channelStarted(machine.makeChannelID()) == nil)
    #expect(machine.state == .shutdown)
  }
}
