//! A probe of a local service never goes through a proxy: with `HTTP_PROXY`, `ALL_PROXY` and
//! `http_proxy` all naming a listener on 127.0.0.1 that records whatever reaches it, the probe
//! still reaches the service directly and the proxy sees nothing. (Its own test binary: the
//! variables are process-wide.)

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use fabric_companion::services::{ServiceState, inspect};

fn listen() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Reads each request's head into `seen`, answers with `answer`.
fn serve(listener: TcpListener, answer: String, seen: Arc<Mutex<Vec<String>>>) {
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                head.push_str(&line);
                line.clear();
            }
            seen.lock().unwrap().push(head);
            let mut stream = stream;
            let _ = stream.write_all(answer.as_bytes());
        }
    });
}

#[test]
fn probes_of_local_services_ignore_the_proxy_variables() {
    let dir = tempfile::tempdir().unwrap();
    let contract = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fabric-contract/fixtures"
    );
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(format!("{contract}/{name}")).unwrap())
            .unwrap()
    };

    let mut answer = read("positive/service-well-known-capabilities.json");
    answer["status"] = "ready".into();
    answer["degraded"] = serde_json::json!([]);
    let body = answer.to_string();
    let (service, service_port) = listen();
    let to_service = Arc::new(Mutex::new(Vec::new()));
    serve(
        service,
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
        Arc::clone(&to_service),
    );
    let (proxy, proxy_port) = listen();
    let to_proxy = Arc::new(Mutex::new(Vec::new()));
    serve(
        proxy,
        "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
        Arc::clone(&to_proxy),
    );
    let proxy_url = format!("http://127.0.0.1:{proxy_port}");
    // SAFETY: this test binary has this one test; no other thread reads the environment yet.
    unsafe {
        for var in ["HTTP_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"] {
            std::env::set_var(var, &proxy_url);
        }
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
    }

    let mut descriptor = read("positive/service-descriptor-systemd.json");
    descriptor["origin"] = format!("http://127.0.0.1:{service_port}").into();
    let file = dir.path().join("example-agent.default.json");
    std::fs::write(&file, descriptor.to_string()).unwrap();
    let view = inspect(&file);

    assert!(
        to_proxy.lock().unwrap().is_empty(),
        "the proxy was asked: {:?}",
        to_proxy.lock().unwrap()
    );
    assert_eq!(view.state, ServiceState::Ready, "{}", view.detail);
    let heads = to_service.lock().unwrap();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with("GET /.well-known/fabric-service HTTP/1.1\r\n"),
        "{heads:?}"
    );
}
