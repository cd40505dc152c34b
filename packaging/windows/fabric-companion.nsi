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
; - Ends the package's running tray and dashboard before it replaces or removes them, at
;   install, upgrade and uninstall alike: only this person's processes whose program is the
;   one in $INSTDIR (EndOurPrograms), never a same-named program elsewhere or another
;   person's. A hook or worker still running keeps its file: it is moved aside and removed
;   next time.
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

; Ends the package's running tray and dashboard, and nothing else: a process is ended only
; when its program is $INSTDIR\fabric-tray.exe or $INSTDIR\fabric-companion.exe (the full
; path, both sides in their long form, compared without regard to case, as Windows names
; files) and it runs as the user running this (its token's user SID is ours). A program of the
; same name in another folder, or another person's copy (which an elevated run could open),
; is left alone. Done with native calls through the System plugin, not taskkill: /IM matches
; the name only, and Wine's taskkill has no /FI filters. Each ended process is waited for (5 s
; at most) so that its file can be replaced or removed. When this user's SID cannot be read,
; nothing is ended (PlaceProgram then moves a running program aside).
;
; Registers (saved and restored): $0 our TOKEN_USER, $1 and $2 the two programs' paths, $3
; the pid list, $4 its size, $5 its bytes filled, $6 the offset in it, $7 a pid, $8 its
; process handle, $9 results; $R0 its program's path, $R1 its token, $R2 its TOKEN_USER,
; $R3 and $R4 scratch.
!define PROCESS_TERMINATE 0x0001
!define PROCESS_QUERY_LIMITED_INFORMATION 0x1000
!define SYNCHRONIZE 0x00100000
!define TOKEN_QUERY 0x0008
!define TOKEN_USER_CLASS 1
!define TOKEN_USER_SIZE 256 ; TOKEN_USER and its SID (at most 68 bytes) fit
!define /math OPEN_RIGHTS ${PROCESS_TERMINATE} | ${PROCESS_QUERY_LIMITED_INFORMATION}
!define /redef /math OPEN_RIGHTS ${OPEN_RIGHTS} | ${SYNCHRONIZE}

; The long form of the path in ${VAR} (8.3 names expanded), in place; unchanged when it
; cannot be had (the file is not there). Uses $R4 and $9.
!macro LongPathOf VAR
  Push ${VAR}
  System::Call 'kernel32::GetLongPathNameW(w s, w .R4, i ${NSIS_MAX_STRLEN}) i .r9'
  ${If} $9 > 0
  ${AndIf} $9 < ${NSIS_MAX_STRLEN}
    StrCpy ${VAR} $R4
  ${EndIf}
!macroend

!macro DefineEndOurPrograms UN
Function ${UN}EndOurPrograms
  Push $0
  Push $1
  Push $2
  Push $3
  Push $4
  Push $5
  Push $6
  Push $7
  Push $8
  Push $9
  Push $R0
  Push $R1
  Push $R2
  Push $R3
  Push $R4

  StrCpy $3 0
  StrCpy $1 "$INSTDIR\fabric-tray.exe"
  !insertmacro LongPathOf $1
  StrCpy $2 "$INSTDIR\fabric-companion.exe"
  !insertmacro LongPathOf $2

  ; Who we are: our own token's user.
  System::Alloc ${TOKEN_USER_SIZE}
  Pop $0
  System::Alloc ${TOKEN_USER_SIZE}
  Pop $R2
  System::Call 'kernel32::GetCurrentProcess() p .R3'
  System::Call 'advapi32::OpenProcessToken(p R3, i ${TOKEN_QUERY}, *p .R1) i .r9'
  ${If} $9 = 0
    Goto done
  ${EndIf}
  System::Call 'advapi32::GetTokenInformation(p R1, i ${TOKEN_USER_CLASS}, p r0, i ${TOKEN_USER_SIZE}, *i .r9) i .r9'
  System::Call 'kernel32::CloseHandle(p R1)'
  ${If} $9 = 0
    Goto done
  ${EndIf}

  ; Every process's id (K32EnumProcesses), the list grown until it holds them all.
  StrCpy $4 16384
  enumerate:
    ${If} $3 P<> 0
      System::Free $3
    ${EndIf}
    System::Alloc $4
    Pop $3
    System::Call 'kernel32::K32EnumProcesses(p r3, i r4, *i .r5) i .r9'
    ${If} $9 = 0
      Goto done
    ${EndIf}
    ${If} $5 >= $4
    ${AndIf} $4 < 4194304
      IntOp $4 $4 * 4
      Goto enumerate
    ${EndIf}

  StrCpy $6 0
  ${DoWhile} $6 < $5
    IntPtrOp $R3 $3 + $6
    System::Call '*$R3(i .r7)'
    IntOp $6 $6 + 4
    System::Call 'kernel32::OpenProcess(i ${OPEN_RIGHTS}, i 0, i r7) p .r8'
    ${If} $8 P= 0
      ${Continue} ; gone, or not ours to end
    ${EndIf}
    System::Call 'kernel32::QueryFullProcessImageNameW(p r8, i 0, w .R0, *i ${NSIS_MAX_STRLEN}) i .r9'
    ${If} $9 <> 0
      !insertmacro LongPathOf $R0
      ${If} $R0 == $1 ; == is StrCmp: case-insensitive
      ${OrIf} $R0 == $2
        System::Call 'advapi32::OpenProcessToken(p r8, i ${TOKEN_QUERY}, *p .R1) i .r9'
        ${If} $9 <> 0
          System::Call 'advapi32::GetTokenInformation(p R1, i ${TOKEN_USER_CLASS}, p R2, i ${TOKEN_USER_SIZE}, *i .r9) i .r9'
          System::Call 'kernel32::CloseHandle(p R1)'
          ${If} $9 <> 0
            System::Call '*$0(p .R3)'
            System::Call '*$R2(p .R4)'
            System::Call 'advapi32::EqualSid(p R3, p R4) i .r9'
            ${If} $9 <> 0
              System::Call 'kernel32::TerminateProcess(p r8, i 1)'
              System::Call 'kernel32::WaitForSingleObject(p r8, i 5000)'
            ${EndIf}
          ${EndIf}
        ${EndIf}
      ${EndIf}
    ${EndIf}
    System::Call 'kernel32::CloseHandle(p r8)'
  ${Loop}

  done:
  ${If} $3 P<> 0
    System::Free $3
  ${EndIf}
  System::Free $R2
  System::Free $0

  Pop $R4
  Pop $R3
  Pop $R2
  Pop $R1
  Pop $R0
  Pop $9
  Pop $8
  Pop $7
  Pop $6
  Pop $5
  Pop $4
  Pop $3
  Pop $2
  Pop $1
  Pop $0
FunctionEnd
!macroend
!insertmacro DefineEndOurPrograms ""
!insertmacro DefineEndOurPrograms "un."

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
  Call EndOurPrograms
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
  Call un.EndOurPrograms
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
