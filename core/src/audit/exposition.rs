//! Prometheus text exposition (the classical format `/metrics` serves), read exactly.
