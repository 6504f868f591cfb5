//! Users: who a token speaks for, and the accounts admins make.

pub mod service;
