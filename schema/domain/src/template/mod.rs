//! GPR templates (profiles) and auto-GPR: admins keep templates (a GPR's shape, size, priority
//! and window) and publish them to slices, whose members start GPRs from them; an admin binds
//! one to a slice, so a GPU pod of the slice that stays Pending makes EGS ask for nodes with a
//! GPR from that template. The rules are in [`service`].

pub mod service;
