; Inno Setup 6 script: Labrig for Windows, installed per machine (docs/install.md).
;
; Build the bundle on Windows first (PyInstaller does not cross-compile), then from the repository:
;   iscc /DAppVersion=0.1.0 installer\labrig.iss          -> dist\labrig-0.1.0-setup.exe
; /DBundleDir=PATH picks another bundle folder (default ..\dist\labrig, relative to this file).
;
; What it does:
;   * installs the one-folder bundle in Program Files\Labrig (administrator rights: per machine);
;   * creates the lab data folder %ProgramData%\Labrig, writable by every user of the PC, and sets
;     LABRIG_STORE to it machine-wide, so the window and the command line share one store;
;   * a Start-menu entry for the window, one for the self-test (in a console that stays open),
;     and the uninstaller;
;   * runs `labrig --self-test` at the end and says so when it fails;
;   * the uninstaller removes the program and keeps the lab data unless the box "Also delete all
;     lab data" is ticked (silent uninstall: only with /DELETEDATA=yes).
; Not built or run on Linux CI: it needs Windows and Inno Setup 6.4 or newer (CreateCustomForm
; with four arguments).

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef BundleDir
  #define BundleDir "..\dist\labrig"
#endif

[Setup]
AppId={{6B0F2E8C-4D1A-4C57-9A57-3E4B2C7D9A10}
AppName=Labrig
AppVersion={#AppVersion}
AppPublisher=Labrig
AppComments=Capture-and-analysis workstation for labs
DefaultDirName={autopf}\Labrig
DefaultGroupName=Labrig
DisableProgramGroupPage=yes
PrivilegesRequired=admin
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
ChangesEnvironment=yes
CloseApplications=yes
OutputDir=..\dist
OutputBaseFilename=labrig-{#AppVersion}-setup
SetupIconFile=..\resources\icons\labrig.ico
UninstallDisplayIcon={app}\labrig.exe
UninstallDisplayName=Labrig {#AppVersion}
; the bundle is ~450 MB of libraries: fast LZMA2 keeps the build in minutes
Compression=lzma2/fast
SolidCompression=yes
WizardStyle=modern

[Dirs]
; the lab data: every user of this PC records into it; never removed by the uninstaller itself
Name: "{commonappdata}\Labrig"; Permissions: users-modify; Flags: uninsneveruninstall

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Labrig"; Filename: "{app}\labrig.exe"; Parameters: "--store ""{commonappdata}\Labrig"""; \
  WorkingDir: "{commonappdata}\Labrig"; IconFilename: "{app}\_internal\labrig\resources\icons\labrig.ico"
Name: "{group}\Labrig self-test"; Filename: "{cmd}"; Parameters: "/k """"{app}\labrig.exe"" --self-test"""; \
  IconFilename: "{app}\_internal\labrig\resources\icons\labrig.ico"
Name: "{group}\Uninstall Labrig"; Filename: "{uninstallexe}"

[Registry]
Root: HKLM; Subkey: "SYSTEM\CurrentControlSet\Control\Session Manager\Environment"; ValueType: expandsz; \
  ValueName: "LABRIG_STORE"; ValueData: "{commonappdata}\Labrig"; Flags: uninsdeletevalue

[Code]
var
  DeleteLabData: Boolean;

function LabDataFolder(): String;
begin
  Result := ExpandConstant('{commonappdata}\Labrig');
end;

procedure CurStepChanged(CurStep: TSetupStep);
var
  ResultCode: Integer;
begin
  if CurStep <> ssPostInstall then
    exit;
  WizardForm.StatusLabel.Caption := 'Checking the installation (labrig --self-test)...';
  if not Exec(ExpandConstant('{app}\labrig.exe'), '--self-test', '', SW_HIDE, ewWaitUntilTerminated, ResultCode)
     or (ResultCode <> 0) then
    SuppressibleMsgBox('Labrig was installed, but its self-test failed (exit code ' + IntToStr(ResultCode) + ').' + #13#10 +
      'Open "Labrig self-test" in the Start menu to see which check failed and what to do.',
      mbError, MB_OK, IDOK);
end;

{ The uninstaller asks once, before removing anything: keep the lab data (default) or delete it too. }
function AskDeleteLabData(var Confirmed: Boolean): Boolean;
var
  Form: TSetupForm;
  Note: TNewStaticText;
  Box: TNewCheckBox;
  OkButton, CancelButton: TNewButton;
begin
  Form := CreateCustomForm(ScaleX(460), ScaleY(150), False, True);
  try
    Form.Caption := 'Uninstall Labrig';
    Note := TNewStaticText.Create(Form);
    Note.Parent := Form;
    Note.Left := ScaleX(12);
    Note.Top := ScaleY(12);
    Note.Width := Form.ClientWidth - ScaleX(24);
    Note.Height := ScaleY(44);
    Note.AutoSize := False;
    Note.WordWrap := True;
    Note.Caption := 'Labrig will be removed. The lab data in ' + LabDataFolder() +
      ' (recordings, results and their database) is kept unless you tick the box below.';
    Box := TNewCheckBox.Create(Form);
    Box.Parent := Form;
    Box.Left := ScaleX(12);
    Box.Top := ScaleY(64);
    Box.Width := Form.ClientWidth - ScaleX(24);
    Box.Height := ScaleY(20);
    Box.Caption := 'Also delete all lab data (this cannot be undone)';
    Box.Checked := False;
    OkButton := TNewButton.Create(Form);
    OkButton.Parent := Form;
    OkButton.Caption := 'Uninstall';
    OkButton.ModalResult := mrOk;
    OkButton.Default := True;
    OkButton.Width := ScaleX(85);
    OkButton.Height := ScaleY(25);
    OkButton.Top := Form.ClientHeight - ScaleY(25 + 12);
    OkButton.Left := Form.ClientWidth - ScaleX(85 + 8 + 85 + 12);
    CancelButton := TNewButton.Create(Form);
    CancelButton.Parent := Form;
    CancelButton.Caption := 'Cancel';
    CancelButton.ModalResult := mrCancel;
    CancelButton.Cancel := True;
    CancelButton.Width := ScaleX(85);
    CancelButton.Height := ScaleY(25);
    CancelButton.Top := OkButton.Top;
    CancelButton.Left := Form.ClientWidth - ScaleX(85 + 12);
    Form.ActiveControl := CancelButton;
    Confirmed := Form.ShowModal() = mrOk;
    Result := Confirmed and Box.Checked;
  finally
    Form.Free();
  end;
end;

function InitializeUninstall(): Boolean;
var
  Confirmed: Boolean;
begin
  if UninstallSilent() then
  begin
    DeleteLabData := CompareText(ExpandConstant('{param:DELETEDATA|no}'), 'yes') = 0;
    Result := True;
  end
  else
  begin
    DeleteLabData := AskDeleteLabData(Confirmed);
    Result := Confirmed;  { Cancel: nothing is removed }
  end;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if (CurUninstallStep = usPostUninstall) and DeleteLabData then
    if not DelTree(LabDataFolder(), True, True, True) then
      SuppressibleMsgBox('Some lab data in ' + LabDataFolder() + ' could not be deleted (is Labrig still open?). ' +
        'Delete the folder by hand.', mbError, MB_OK, IDOK);
end;
