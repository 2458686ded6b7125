# services.hermes-agent: the hermes gateway as a NixOS service.
#
# Option names follow upstream Hermes Agent's NixOS module, so a configuration
# written for it reads the same here; what a Go hermes needs differently (no
# Python package to override, the plugin interpreter chosen by HERMES_PYTHON)
# is said where it happens. docs/DESIGN.md "NixOS module" has the reasons.
#
#   services.hermes-agent = {
#     enable = true;
#     settings.model.default = "anthropic/claude-sonnet-4";
#     environmentFiles = [ config.sops.secrets."hermes/env".path ];
#     extraPlugins = [ pkgs.my-hermes-plugin ];
#     settings.plugins.enabled = [ "my-plugin" ];   # the manifest name
#   };
{ config, lib, pkgs, ... }:

let
  cfg = config.services.hermes-agent;
  hermesHome = "${cfg.stateDir}/.hermes";
  owner = "${cfg.user}:${cfg.group}";

  # settings from several modules merge deeply, later definitions winning per
  # key, as upstream's (lib.types.attrs would keep only the last definition).
  deepSettings = lib.types.mkOptionType {
    name = "hermes-settings";
    description = "Hermes config.yaml settings, deep-merged across definitions";
    check = builtins.isAttrs;
    merge = _loc: defs: lib.foldl' lib.recursiveUpdate { } (map (d: d.value) defs);
  };

  # JSON is YAML: `hermes config merge` reads it with the config parser and
  # lays it over config.yaml, keeping the user's other keys and comments.
  settingsFile = pkgs.writeText "hermes-settings.json" (builtins.toJSON cfg.settings);

  activatePlugins = pkgs.writeShellScript "hermes-activate-plugins"
    (builtins.readFile ./activate-plugins.sh);

  pluginName = p: lib.getName p;
  pluginNames = map pluginName cfg.extraPlugins;

  # Plugins with Python dependencies, and pip-packaged entry-point plugins, come
  # from one interpreter environment; hermes is told to use it (HERMES_PYTHON)
  # and scans its site-packages for entry points.
  pythonEnv = cfg.pythonPackage.withPackages (_: cfg.extraPythonPackages);
  python =
    if cfg.extraPythonPackages == [ ] then "${cfg.pythonPackage}/bin/python3"
    else "${pythonEnv}/bin/python3";

  validEnvName = n: builtins.match "[A-Za-z_][A-Za-z0-9_]*" n != null;
  noNewline = v: builtins.match ".*\n.*" v == null;
  envLines = lib.concatStringsSep "\n" (lib.mapAttrsToList (k: v: "${k}=${v}") cfg.environment);

  execStart = lib.concatStringsSep " " (
    [ "${cfg.package}/bin/hermes" "gateway" "run" "--replace" ]
    ++ map lib.escapeShellArg cfg.extraArgs
  );

  activation = ''
    # hermes-agent: directories, config.yaml, .env and the Nix-managed plugins.
    for d in ${lib.escapeShellArgs [ cfg.stateDir hermesHome "${hermesHome}/logs" "${hermesHome}/plugins" "${hermesHome}/sessions" "${hermesHome}/memories" "${hermesHome}/cron" cfg.workingDirectory ]}; do
      install -d -m 2770 -o ${lib.escapeShellArg cfg.user} -g ${lib.escapeShellArg cfg.group} "$d"
    done

    ${if cfg.configFile != null then ''
      # configFile is installed as given: the user asked for exactly that file.
      install -m 0640 -o ${lib.escapeShellArg cfg.user} -g ${lib.escapeShellArg cfg.group} ${cfg.configFile} ${lib.escapeShellArg "${hermesHome}/config.yaml"}
    '' else ''
      # Nix values win; the keys and comments the user added stay.
      HERMES_HOME=${lib.escapeShellArg hermesHome} ${cfg.package}/bin/hermes config merge --from ${settingsFile}
      chown ${lib.escapeShellArg owner} ${lib.escapeShellArg "${hermesHome}/config.yaml"} ${lib.escapeShellArg "${hermesHome}/config.yaml.lock"}
      chmod 0640 ${lib.escapeShellArg "${hermesHome}/config.yaml"}
    ''}

    # The marker tells an interactive hermes that this home is managed by Nix.
    touch ${lib.escapeShellArg "${hermesHome}/.managed"}
    chmod 0644 ${lib.escapeShellArg "${hermesHome}/.managed"}

    ${lib.optionalString (cfg.environment != { } || cfg.environmentFiles != [ ]) ''
      # .env is rebuilt on each activation: environment first, then each
      # environmentFiles entry (secrets, read here and never in the store).
      env_tmp=$(mktemp ${lib.escapeShellArg "${hermesHome}/.env.XXXXXX"})
      cat > "$env_tmp" <<'HERMES_NIX_ENV'
    ${envLines}
    HERMES_NIX_ENV
      for f in ${lib.escapeShellArgs cfg.environmentFiles}; do
        if [ -f "$f" ]; then
          printf '\n' >> "$env_tmp"
          cat "$f" >> "$env_tmp"
        else
          echo "hermes-agent: environmentFiles entry $f does not exist; skipped" >&2
        fi
      done
      chown ${lib.escapeShellArg owner} "$env_tmp"
      chmod 0640 "$env_tmp"
      mv -f "$env_tmp" ${lib.escapeShellArg "${hermesHome}/.env"}
    ''}

    HERMES_PLUGIN_OWNER=${lib.escapeShellArg owner} ${activatePlugins} ${lib.escapeShellArg "${hermesHome}/plugins"} ${lib.escapeShellArgs (map (p: "${pluginName p}=${p}") cfg.extraPlugins)}
  '';
in
{
  options.services.hermes-agent = {
    enable = lib.mkEnableOption "the Hermes Agent gateway (hermes gateway run)";

    package = lib.mkOption {
      type = lib.types.package;
      default = pkgs.callPackage ./package.nix { };
      defaultText = lib.literalExpression "pkgs.callPackage ./nix/package.nix { }";
      description = "The hermes package; its bin/hermes runs the gateway and the activation's config merge.";
    };

    user = lib.mkOption {
      type = lib.types.str;
      default = "hermes";
      description = "User the gateway runs as; it owns HERMES_HOME.";
    };

    group = lib.mkOption {
      type = lib.types.str;
      default = "hermes";
      description = "Group of the gateway and of HERMES_HOME.";
    };

    createUser = lib.mkOption {
      type = lib.types.bool;
      default = true;
      description = "Create user and group as system accounts.";
    };

    stateDir = lib.mkOption {
      type = lib.types.str;
      default = "/var/lib/hermes";
      description = "State directory; HERMES_HOME is its .hermes subdirectory.";
    };

    workingDirectory = lib.mkOption {
      type = lib.types.str;
      default = "${cfg.stateDir}/workspace";
      defaultText = lib.literalExpression ''"''${stateDir}/workspace"'';
      description = "Working directory of the gateway (the agent's tools run here).";
    };

    settings = lib.mkOption {
      type = deepSettings;
      default = { };
      example = lib.literalExpression ''
        {
          model.default = "anthropic/claude-sonnet-4";
          platforms.telegram.enabled = true;
          plugins.enabled = [ "my-plugin" ];
        }
      '';
      description = ''
        config.yaml settings. Definitions from several modules merge deeply.
        On each activation they are merged into $HERMES_HOME/config.yaml with
        `hermes config merge`: these values win, keys only the file has stay,
        and so do its comments.
      '';
    };

    configFile = lib.mkOption {
      type = lib.types.nullOr lib.types.path;
      default = null;
      description = "A whole config.yaml installed as is on each activation, instead of merging settings.";
    };

    environment = lib.mkOption {
      type = lib.types.attrsOf lib.types.str;
      default = { };
      description = "Non-secret variables written to $HERMES_HOME/.env (secrets go in environmentFiles).";
    };

    environmentFiles = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      example = [ "/run/secrets/hermes.env" ];
      description = ''
        Files of KEY=value lines (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, ...)
        appended to $HERMES_HOME/.env at activation. Give paths outside the
        store so the secrets stay out of it.
      '';
    };

    extraPlugins = lib.mkOption {
      type = lib.types.listOf lib.types.package;
      default = [ ];
      description = ''
        Plugin packages, each with plugin.yaml at its root, linked as
        $HERMES_HOME/plugins/nix-managed-<name> (name from the package's pname).
        Links of plugins no longer listed are removed on activation; plugins
        installed by hand are left alone. Enable them by their manifest name in
        settings.plugins.enabled.
      '';
    };

    extraPythonPackages = lib.mkOption {
      type = lib.types.listOf lib.types.package;
      default = [ ];
      description = ''
        Python packages (built with pythonPackage) for the interpreter that runs
        Python plugins: their dependencies, or pip-packaged plugins found by
        their hermes_agent.plugins entry points.
      '';
    };

    pythonPackage = lib.mkOption {
      type = lib.types.package;
      default = pkgs.python312;
      defaultText = lib.literalExpression "pkgs.python312";
      description = "Python that runs the plugins (HERMES_PYTHON), with extraPythonPackages added.";
    };

    extraArgs = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = "More arguments for `hermes gateway run --replace`.";
    };

    extraPackages = lib.mkOption {
      type = lib.types.listOf lib.types.package;
      default = [ ];
      description = "Packages on the service's PATH (tools the agent's terminal may run).";
    };

    restart = lib.mkOption {
      type = lib.types.str;
      default = "always";
      description = "systemd Restart= of the service.";
    };

    restartSec = lib.mkOption {
      type = lib.types.int;
      default = 5;
      description = "systemd RestartSec= of the service, in seconds.";
    };
  };

  config = lib.mkIf cfg.enable (lib.mkMerge [
    {
      assertions = [
        {
          assertion = lib.length pluginNames == lib.length (lib.unique pluginNames);
          message = "services.hermes-agent.extraPlugins: two plugins share a name (${toString pluginNames}); give each package its own pname (e.g. fetchFromGitHub { name = \"plugin-name\"; ... }).";
        }
        {
          assertion = lib.all validEnvName (lib.attrNames cfg.environment);
          message = "services.hermes-agent.environment: a name is letters, digits and _ and does not start with a digit: ${toString (lib.attrNames cfg.environment)}";
        }
        {
          assertion = lib.all noNewline (lib.attrValues cfg.environment);
          message = "services.hermes-agent.environment: a value has a newline; .env holds one line per variable, so put it in an environmentFiles entry quoted.";
        }
      ];

      system.activationScripts.hermes-agent = lib.stringAfter [ "users" ] activation;

      systemd.services.hermes-agent = {
        description = "Hermes Agent gateway";
        wantedBy = [ "multi-user.target" ];
        after = [ "network-online.target" ];
        wants = [ "network-online.target" ];
        path = cfg.extraPackages;
        environment = {
          HOME = cfg.stateDir;
          HERMES_HOME = hermesHome;
          HERMES_MANAGED = "true";
          HERMES_PYTHON = python;
          MESSAGING_CWD = cfg.workingDirectory;
        };
        serviceConfig = {
          User = cfg.user;
          Group = cfg.group;
          WorkingDirectory = cfg.workingDirectory;
          ExecStart = execStart;
          Restart = cfg.restart;
          RestartSec = cfg.restartSec;
          # SIGTERM to hermes alone, so it can drain running turns and stop its
          # plugins itself; stragglers get SIGKILL after the timeout.
          KillMode = "mixed";
          KillSignal = "SIGTERM";
          # 78: the configuration is wrong, and restarting will not fix it.
          RestartPreventExitStatus = "78";
          NoNewPrivileges = true;
          ProtectSystem = "strict";
          ReadWritePaths = [ cfg.stateDir cfg.workingDirectory ];
          PrivateTmp = true;
          UMask = "0007";
        };
      };
    }

    (lib.mkIf cfg.createUser {
      users.groups.${cfg.group} = { };
      users.users.${cfg.user} = {
        isSystemUser = true;
        group = cfg.group;
        home = cfg.stateDir;
        createHome = true;
      };
    })
  ]);
}
