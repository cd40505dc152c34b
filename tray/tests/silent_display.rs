//! The XEmbed tray check on a display that never answers (issue 22, item 1): the tray asks
//! the X display whether an XEmbed tray manager runs (at start without a
//! StatusNotifierWatcher, and when the menu asks for a tray host). Through Xlib that call had
//! no deadline: with `DISPLAY` on a listener that takes the connection and never answers, it
//! never returned. It must end, saying no tray, within a bound. One test in this binary: it
//! sets `DISPLAY` for the process.
#![cfg(target_os = "linux")]

use std::time::Duration;

#[test]
fn the_xembed_tray_check_ends_on_a_display_that_never_answers() {
    let (number, _silent) = (150u16..250)
        .find_map(|n| {
            std::net::TcpListener::bind(("127.0.0.1", 6000 + n))
                .ok()
                .map(|l| (n, l))
        })
        .expect("a free display port");
    // SAFETY: the only test of this binary; no other thread reads the environment yet.
    unsafe { std::env::set_var("DISPLAY", format!("127.0.0.1:{number}")) };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(fabric_tray::tray_host::xembed_tray_present());
    });
    let present = receiver
        .recv_timeout(Duration::from_secs(20))
        .expect("the XEmbed tray check still asking the display after 20 s");
    assert!(!present, "a display that never answers has no tray");
}
