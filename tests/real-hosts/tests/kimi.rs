//! Kimi Code runs whole sessions with our hooks (see `real_hosts::checks` for what each test holds
//! the product to). Without the host installed every test says "not run" and why; run
//! `tests/real-hosts/run.sh` to install the pinned version and run them for real.

real_hosts::host_tests!(real_hosts::Host::Kimi);
