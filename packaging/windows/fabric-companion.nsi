; The Windows package: a per-person installer (no administrator rights) of the tray
; (fabric-tray.exe), the hook program (fabric-session.exe) and the dashboard
; (fabric-companion.exe), made by Debian's makensis through scripts/build-windows-installer.sh,
; which passes VERSION, BINDIR (the three programs), ROOT (the repository) and OUTFILE (and
; FAST_COMPRESSION for the debug package the Wine suite installs).
;
; What it does, and why:
; - Installs into %LOCALAPPDATA%\Programs\fabric-companion (no space: the hosts' cmd runs the
;   hook program there without quotes), or where an earlier install went (its InstallLocation):
;   an upgrade replaces the programs in place, so the hooks' command text, and Codex's approval
;   of it, stay as they are.
; - Records itself under HKCU\...\Uninstall\FabricCompanion: InstallLocation is how our
;   programs know they are the package's (companion_hosts::stable_binary::WINDOWS_UNINSTALL_KEY),
;   so the hooks they install run $INSTDIR\fabric-session.exe behind a guard that does nothing
;   once it is gone (companion_hosts::hook_command).
; - The tray starts at login: the HKCU Run value "Fabric Companion" (companion_desktop::autostart,
;   the same value the dashboard's setting turns off). The Start menu gets the dashboard, whose
;   AppUserModelID is registered for the tray's toasts.
; - Ends the package's running tray and dashboard before it replaces or removes them (a hook
;   or worker still running keeps its file: it is moved aside and removed next time).
; - The uninstaller removes every file and registry value of the package. The hosts' configs
;   keep our entries, which do nothing while the program is gone; the hook log, the session
;   spools (%LOCALAPPDATA%\fabric-companion) and the settings (%APPDATA%\fabric-companion) are
;   the person's, as on Linux.

Unicode true
Target amd64-unicode
!ifdef FAST_COMPRESSION
  SetCompressor zlib
!else
  SetCompressor /SOLID lzma
!endif
RequestExecutionLevel user
ManifestDPIAware true

!include "MUI2.nsh"
!include "LogicLib.nsh"

!ifndef VERSION
  !error "VERSION is not defined (makensis -DVERSION=…)"
!endif
!ifndef BINDIR
  !error "BINDIR is not defined (the folder of the three .exe files)"
!endif
!ifndef ROOT
  !error "ROOT is not defined (the repository)"
!endif
!ifndef OUTFILE
  !define OUTFILE "fabric-companion_${VERSION}_x64-setup.exe"
!endif

!define PRODUCT "Fabric Companion"
!define PUBLISHER "Passion Code"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\FabricCompanion"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define RUN_VALUE "Fabric Companion"
!define AUMID "ai.passioncode.fabric-companion.dashboard"
!define AUMID_KEY "Software\Classes\AppUserModelId\${AUMID}"

Name "${PRODUCT}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\fabric-companion"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${PRODUCT} ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${PRODUCT}"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "FileDescription" "${PRODUCT} installer"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "Copyright (c) 2026 ${PUBLISHER}"

!define MUI_ICON "${ROOT}\src-tauri\icons\icon.ico"
!define MUI_UNICON "${ROOT}\src-tauri\icons\icon.ico"
!define MUI_FINISHPAGE_RUN "$INSTDIR\fabric-tray.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start the tray now"
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; Ends the package's tray and dashboard (this person's only: a per-person install).
!macro EndOurPrograms
  nsExec::Exec '"$SYSDIR\taskkill.exe" /F /IM fabric-tray.exe'
  Pop $0
  nsExec::Exec '"$SYSDIR\taskkill.exe" /F /IM fabric-companion.exe'
  Pop $0
  Sleep 500
!macroend

; Puts a program in place: one still running (a hook's worker) is moved aside first, which
; Windows allows, and removed at a later install.
!macro PlaceProgram NAME
  Delete "$INSTDIR\${NAME}.old"
  ${If} ${FileExists} "$INSTDIR\${NAME}"
    Delete "$INSTDIR\${NAME}"
    ${If} ${FileExists} "$INSTDIR\${NAME}"
      Rename "$INSTDIR\${NAME}" "$INSTDIR\${NAME}.old"
    ${EndIf}
  ${EndIf}
  File "${BINDIR}\${NAME}"
!macroend

Section "Install"
  SetShellVarContext current
  !insertmacro EndOurPrograms
  SetOutPath "$INSTDIR"
  !insertmacro PlaceProgram "fabric-companion.exe"
  !insertmacro PlaceProgram "fabric-tray.exe"
  !insertmacro PlaceProgram "fabric-session.exe"
  !ifdef WEBVIEW2_LOADER
    File "${WEBVIEW2_LOADER}"
  !endif
  File "/oname=LICENSE-MIT.txt" "${ROOT}\LICENSE-MIT"
  File "/oname=LICENSE-APACHE.txt" "${ROOT}\LICENSE-APACHE"
  !ifdef NOTICES
    File "/oname=third-party-notices.txt" "${NOTICES}"
  !endif
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateShortcut "$SMPROGRAMS\${PRODUCT}.lnk" "$INSTDIR\fabric-companion.exe" "" "$INSTDIR\fabric-companion.exe" 0

  ; The tray's toasts name the dashboard's AppUserModelID.
  WriteRegStr HKCU "${AUMID_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${AUMID_KEY}" "IconUri" "$INSTDIR\fabric-companion.exe"

  WriteRegStr HKCU "${RUN_KEY}" "${RUN_VALUE}" '"$INSTDIR\fabric-tray.exe"'

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\fabric-companion.exe"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  !insertmacro EndOurPrograms
  Delete "$INSTDIR\fabric-companion.exe"
  Delete "$INSTDIR\fabric-tray.exe"
  Delete "$INSTDIR\fabric-session.exe"
  Delete "$INSTDIR\fabric-companion.exe.old"
  Delete "$INSTDIR\fabric-tray.exe.old"
  Delete "$INSTDIR\fabric-session.exe.old"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\LICENSE-MIT.txt"
  Delete "$INSTDIR\LICENSE-APACHE.txt"
  Delete "$INSTDIR\third-party-notices.txt"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  ; Windows' own per-person programs folder; a fresh profile may not have had it (gone only
  ; when empty).
  RMDir "$LOCALAPPDATA\Programs"

  Delete "$SMPROGRAMS\${PRODUCT}.lnk"
  DeleteRegKey HKCU "${AUMID_KEY}"
  DeleteRegValue HKCU "${RUN_KEY}" "${RUN_VALUE}"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
SectionEnd
