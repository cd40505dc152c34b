//! The `fabric-companion` binary: the dashboard window. Everything lives in the library.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    fabric_companion::run();
}
