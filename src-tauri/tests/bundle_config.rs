//! The bundle configuration as `tauri build` reads it on each OS: `tauri.conf.json`, merged
//! with the platform's `tauri.<os>.conf.json`, then with `tauri.bundle.conf.json` (the
//! sidecars), each a JSON Merge Patch, parsed by Tauri's own config types (which refuse
//! unknown keys). Checked here for all three OSes, since Windows and macOS bundles cannot be
//! built on this machine.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tauri::utils::config::{BundleTarget, BundleType, Config};
use tauri::utils::platform::Target;

fn src_tauri() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// RFC 7396: objects merge key by key, `null` removes, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let object = target.as_object_mut().expect("an object");
    for (key, value) in patch {
        if value.is_null() {
            object.remove(key);
        } else {
            merge_patch(object.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// The configuration `tauri build --config tauri.bundle.conf.json` sees on `target`.
fn bundle_config(target: Target) -> Config {
    let (mut value, _) = tauri::utils::config::parse::read_from(target, &src_tauri())
        .expect("tauri.conf.json and the platform file parse");
    let bundle: Value = serde_json::from_str(
        &std::fs::read_to_string(src_tauri().join("tauri.bundle.conf.json")).unwrap(),
    )
    .unwrap();
    merge_patch(&mut value, &bundle);
    serde_json::from_value(value).expect("a valid Tauri config")
}

fn targets(config: &Config) -> Vec<String> {
    match &config.bundle.targets {
        BundleTarget::All => vec!["all".into()],
        BundleTarget::List(list) => list.iter().map(|t| format!("{t:?}")).collect(),
        BundleTarget::One(one) => vec![format!("{one:?}")],
    }
}

fn has_icon(config: &Config, extension: &str) -> bool {
    config
        .bundle
        .icon
        .iter()
        .any(|icon| icon.ends_with(extension) && src_tauri().join(icon).is_file())
}

fn sidecars(config: &Config) -> Vec<String> {
    config.bundle.external_bin.clone().unwrap_or_default()
}

#[test]
fn windows_bundles_an_msi_and_an_nsis_installer_with_both_sidecars() {
    let config = bundle_config(Target::Windows);
    let targets = targets(&config);
    assert!(
        targets.contains(&format!("{:?}", BundleType::Msi)),
        "{targets:?}"
    );
    assert!(
        targets.contains(&format!("{:?}", BundleType::Nsis)),
        "{targets:?}"
    );
    assert_eq!(
        sidecars(&config),
        ["binaries/fabric-tray", "binaries/fabric-session"]
    );
    // tauri-build embeds icon.ico as the executable's resource (the build fails without it).
    assert!(has_icon(&config, ".ico"));
    let nsis = config.bundle.windows.nsis.as_ref().expect("NSIS settings");
    // A per-person install: no administrator, and autostart lives in HKCU anyway.
    assert_eq!(
        format!("{:?}", nsis.install_mode),
        "CurrentUser",
        "the NSIS installer installs for the current person"
    );
}

#[test]
fn macos_bundles_an_app_and_a_dmg_with_both_sidecars() {
    let config = bundle_config(Target::MacOS);
    let targets = targets(&config);
    assert!(
        targets.contains(&format!("{:?}", BundleType::App)),
        "{targets:?}"
    );
    assert!(
        targets.contains(&format!("{:?}", BundleType::Dmg)),
        "{targets:?}"
    );
    assert_eq!(
        sidecars(&config),
        ["binaries/fabric-tray", "binaries/fabric-session"]
    );
    assert!(has_icon(&config, ".icns"));
    assert!(config.bundle.macos.minimum_system_version.is_some());
}

#[test]
fn linux_bundles_a_deb_and_the_base_config_names_no_sidecar() {
    let config = bundle_config(Target::Linux);
    assert_eq!(targets(&config), [format!("{:?}", BundleType::Deb)]);
    let (base, _) = tauri::utils::config::parse::read_from(Target::Linux, &src_tauri()).unwrap();
    assert!(
        base.pointer("/bundle/externalBin").is_none(),
        "a plain cargo build must not need the sidecars"
    );
}

#[test]
fn the_linux_package_ships_our_gnome_shell_extension_in_both_formats_and_off() {
    // GNOME Shell on Wayland raises a session's window only through our extension. GNOME 45+
    // loads ES modules only, 40–44 scripts only: the package ships both variants, and its
    // postinst links the one this machine's shell loads where GNOME Shell finds system
    // extensions (again on every GNOME Shell upgrade, through a trigger). Nothing turns it on
    // (the person does: the dashboard and `fabric-session focus` say how).
    let config = bundle_config(Target::Linux);
    let uuid = companion_desktop::desktop::GNOME_FOCUS_EXTENSION;
    let deb = &config.bundle.linux.deb;
    for (variant, versions, module) in [
        ("legacy", ["40", "41", "42", "43", "44"].as_slice(), false),
        (
            "module",
            ["45", "46", "47", "48", "49", "50"].as_slice(),
            true,
        ),
    ] {
        let source = deb
            .files
            .get(&PathBuf::from(format!(
                "/usr/share/fabric-companion/gnome-shell-extension/{variant}/{uuid}"
            )))
            .unwrap_or_else(|| panic!("the {variant} extension in the package"));
        let folder = src_tauri().join(source);
        let metadata: Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("metadata.json")).unwrap())
                .unwrap();
        assert_eq!(metadata["uuid"], uuid);
        let listed: Vec<&str> = metadata["shell-version"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(listed, versions, "{variant}");
        let script = std::fs::read_to_string(folder.join("extension.js")).unwrap();
        assert_eq!(script.contains("export default class"), module, "{variant}");
        assert_eq!(script.contains("imports.gi"), !module, "{variant}");
    }
    assert!(
        !deb.files
            .keys()
            .any(|k| k.starts_with("/usr/share/gnome-shell/extensions")),
        "the shell's folder gets a link from postinst, not a file of the package"
    );
    let postinst =
        std::fs::read_to_string(src_tauri().join(deb.post_install_script.as_ref().unwrap()))
            .unwrap();
    assert!(postinst.contains("gnome-shell --version"));
    assert!(
        !postinst.contains("gnome-extensions enable") && !postinst.contains("enabled-extensions"),
        "no install script turns it on"
    );
}

#[test]
fn both_extension_variants_share_one_core() {
    // The two variants differ only in how they load (imports or ES modules) and are created:
    // the D-Bus service between the markers is the same text.
    let core = |variant: &str| {
        let text = std::fs::read_to_string(src_tauri().join(format!(
            "../packaging/linux/gnome-shell-extension/{variant}/{}/extension.js",
            companion_desktop::desktop::GNOME_FOCUS_EXTENSION
        )))
        .unwrap();
        let start = text
            .find("// ---- the shared core")
            .expect("the core's start");
        let end = text
            .find("// ---- end of the shared core")
            .expect("the core's end");
        text[start..end].to_string()
    };
    assert_eq!(core("legacy"), core("module"));
    assert!(core("module").contains("unexport();\n    exported = "));
}

#[test]
fn the_app_identifier_is_the_one_the_tray_notifies_under() {
    // Windows drops toasts whose AppUserModelID no shortcut carries; the installers give the
    // Start menu shortcut the bundle identifier, and the tray names the same one.
    for target in [Target::Windows, Target::MacOS, Target::Linux] {
        assert_eq!(
            bundle_config(target).identifier,
            companion_platform::paths::APP_IDENTIFIER
        );
    }
}

#[test]
fn the_sidecar_script_names_the_files_tauri_looks_for() {
    // tauri looks for <externalBin>-<target triple>[.exe]: the script must write exactly that.
    let script = std::fs::read_to_string(src_tauri().join("scripts/prepare-sidecars.sh")).unwrap();
    assert!(script.contains(r#""$here/binaries/$name-$triple$ext""#));
    assert!(script.contains("*windows*) ext=.exe"));
    assert!(Path::new(&src_tauri().join("scripts/prepare-sidecars.sh")).is_file());
}
