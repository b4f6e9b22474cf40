//! A user's own lock in lwbench, without forking the harness: a ticket spinlock (Mellor-Crummey
//! and Scott's, the one lwsim's validation shows collapsing past a knee; a variant beyond
//! PostgreSQL, which never used one), registered by name in this `main` and measured with the
//! whole command line: every workload, every output file, the invariant checks and both engines.
//!
//! ```sh
//! cargo run --release -p bench --example ticket_lock -- --workload null-x,end-xact \
//!     --locks atomic,ticket --threads 1,2
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo run --release -p bench \
//!     --example ticket_lock -- --engine sim --workload end-xact --locks atomic,ticket \
//!     --threads 1,8,32
//! ```
//!
//! The lock is [`lwlock::reference::TicketLock`] (`lwlock/src/reference/ticket.rs`), written the
//! way a user writes one: against `lwlock::sync` only (its atomics and `spin_loop`, so the same
//! code runs on real threads, under the model checkers and on the simulator), implementing
//! lwlock's [`RawLwLock`](lwlock::RawLwLock) trait in full, with its state, invariants and
//! orderings documented and a `SAFETY` argument for the trait's contract. A lock of one's own
//! goes in one's own crate the same way; this `main` is all lwbench needs to run it.
//!
//! The lock is exclusive only: a shared acquire takes it exclusively, which the harness's checks
//! accept (a shared section finds it held). It spins without ever sleeping, so with more threads
//! than cores on a real machine a preempted ticket holder stalls everyone behind it.

pub use lwlock::reference::TicketLock;

fn main() -> std::process::ExitCode {
    lwbench::Lwbench::new()
        .lock::<TicketLock>(
            "ticket",
            "ticket spinlock (a user lock registered by its own main)",
        )
        .main()
}
