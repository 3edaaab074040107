//! The app-server protocol as acplb speaks it: the method table ([`methods`], every method name
//! in one place) and the typed params of the requests acplb sends ([`requests`], each naming its
//! method). What the server sends is read in `wire.rs` (notification params) and routed by
//! `rpc/`.

pub(crate) mod methods;
pub(crate) mod requests;

pub(crate) use requests::Request;
