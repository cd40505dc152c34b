//! Every sentence a hook says to the model, in one place, so wording stays consistent and
//! reviewable. Nothing here carries message content, branch names or prompts.

use std::path::Path;

use companion_sessions::services::DescriptorCount;

/// The session-start preamble for a host with `fabric` registered while Fabric runs.
pub fn preamble(origin: &str) -> String {
    format!(
        "Fabric is running on this machine ({origin}) and this session reaches it through the \
         `fabric` MCP server. Call `fabric_whoami` first. Read the project board with \
         `com.status` and `com.list`, and `com.read_ack` only the messages you actually read. \
         Before starting work, `fabric_work_list`, then `fabric_work_claim` what you take on; \
         `fabric_work_release` it at the end. Ask another Project for anything only through \
         `com.submit`."
    )
}

/// The one line said when `fabric` is registered but Fabric is not running.
pub fn fabric_down() -> &'static str {
    "Fabric is registered here as the `fabric` MCP server but is not running: start the Fabric \
     app (its lifecycle broker starts the hub), then call `fabric_whoami`."
}

/// The line about service descriptors, said on any host when there are some.
pub fn services_line(count: DescriptorCount, dir: &Path) -> String {
    let noun = if count.total == 1 {
        "descriptor"
    } else {
        "descriptors"
    };
    format!(
        "This machine has {total} Fabric service {noun} (fabric-service/0.1) in {dir}, {local} \
         on 127.0.0.1: probe one with `GET <origin>/.well-known/fabric-service` (2 s timeout, no \
         redirects) before relying on it, and never stop or kill these services.",
        total = count.total,
        local = count.local,
        dir = dir.display(),
    )
}

/// The one line said when the unread count rises.
pub fn unread_line(unread: u64) -> String {
    format!("{unread} unread on the project board — com.list")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_names_the_tools_in_order() {
        let text = preamble("http://127.0.0.1:47070");
        let order = [
            "fabric_whoami",
            "com.status",
            "com.list",
            "com.read_ack",
            "fabric_work_list",
            "fabric_work_claim",
            "fabric_work_release",
            "com.submit",
        ];
        let positions: Vec<usize> = order.iter().map(|t| text.find(t).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    }

    #[test]
    fn unread_line_is_exact() {
        assert_eq!(unread_line(3), "3 unread on the project board — com.list");
    }
}
