# A small stand-in for nixpkgs' lib, enough to evaluate nix/module.nix offline
# (nixpkgs cannot be fetched here). It implements the functions the module
# uses and a reduced module system: option declarations with defaults and
# type checks, definitions from several modules, mkIf/mkMerge pushed down per
# key as NixOS does (so `config = mkIf cfg.enable ...` does not recurse),
# mkDefault priorities, imports, and assertions. What it does not prove is in
# docs/DESIGN.md "NixOS module".
let
  inherit (builtins) attrNames concatMap filter foldl' isAttrs isList isString length;

  kind = x: if isAttrs x then x._type or null else null;

  mkOption = attrs: attrs // { _type = "option"; };
  free = { _type = "free"; }; # a stand-in for option trees other NixOS modules declare

  recursiveUpdate = a: b:
    a // builtins.mapAttrs
      (n: v: if isAttrs v && a ? ${n} && isAttrs a.${n} then recursiveUpdate a.${n} v else v)
      b;

  unique = foldl' (acc: x: if builtins.elem x acc then acc else acc ++ [ x ]) [ ];

  showPath = builtins.concatStringsSep ".";

  # mergeEqual: NixOS refuses two different definitions of a scalar option.
  mergeEqual = loc: defs:
    let vals = map (d: d.value) defs; in
    if length (unique vals) == 1 then builtins.head vals
    else throw "The option `${showPath loc}' has conflicting definition values: ${builtins.toJSON vals}";

  isDerivation = x: isAttrs x && x.type or null == "derivation";

  mkType = name: check: merge: { inherit name check merge; description = name; };

  # Anything else: attribute sets merge key by key, lists concatenate, and
  # otherwise definitions must agree.
  mergeAny = loc: defs:
    let vals = map (d: d.value) defs; in
    if vals == [ ] then { } # a free tree nothing defined
    else if builtins.all (v: isAttrs v && !isDerivation v) vals then
      builtins.listToAttrs (map
        (n: { name = n; value = mergeAny (loc ++ [ n ]) (concatMap (v: if v ? ${n} then [{ value = v.${n}; }] else [ ]) vals); })
        (unique (concatMap attrNames vals)))
    else if builtins.all isList vals then builtins.concatLists vals
    else mergeEqual loc defs;

  types = rec {
    anything = mkType "anything" (_: true) mergeAny;
    str = mkType "string" isString mergeEqual;
    bool = mkType "boolean" builtins.isBool mergeEqual;
    int = mkType "signed integer" builtins.isInt mergeEqual;
    path = mkType "path" (x: builtins.isPath x || (isString x && builtins.substring 0 1 x == "/")) mergeEqual;
    package = mkType "package" isDerivation mergeEqual;
    listOf = t: mkType "list of ${t.name}"
      (x: isList x && builtins.all t.check x)
      (_loc: defs: concatMap (d: d.value) defs);
    attrsOf = t: mkType "attribute set of ${t.name}"
      (x: isAttrs x && builtins.all t.check (builtins.attrValues x))
      (loc: defs: builtins.listToAttrs (map
        (n: { name = n; value = t.merge (loc ++ [ n ]) (concatMap (d: if d.value ? ${n} then [{ value = d.value.${n}; }] else [ ]) defs); })
        (unique (concatMap (d: attrNames d.value) defs))));
    nullOr = t: mkType "null or ${t.name}" (x: x == null || t.check x) mergeEqual;
    enum = vs: mkType "one of ${builtins.toJSON vs}" (x: builtins.elem x vs) mergeEqual;
    mkOptionType = attrs: { check = _: true; merge = mergeEqual; } // attrs;
  };

  # pushDown splits a definition into its keys without evaluating any mkIf
  # condition: the key names of a module's config never depend on config.
  pushDown = v:
    let k = kind v; in
    if k == "merge" then
      foldl' (acc: m: acc // builtins.mapAttrs (n: vs: (acc.${n} or [ ]) ++ vs) m) { } (map pushDown v.contents)
    else if k == "if" then
      builtins.mapAttrs (_: vs: map (x: { _type = "if"; condition = v.condition; content = x; }) vs) (pushDown v.content)
    else if k == "override" then
      builtins.mapAttrs (_: vs: map (x: v // { content = x; }) vs) (pushDown v.content)
    else builtins.mapAttrs (_: x: [ x ]) v;

  # discharge evaluates the conditions: a list of plain values (or overrides).
  discharge = v:
    let k = kind v; in
    if k == "merge" then concatMap discharge v.contents
    else if k == "if" then (if v.condition then discharge v.content else [ ])
    else if k == "override" then map (c: v // { content = c; }) (discharge v.content)
    else [ v ];

  resolveOption = loc: opt: defs:
    let
      ds = concatMap discharge defs;
      prio = d: if kind d == "override" then d.priority else 100;
      best = foldl' (m: d: if prio d < m then prio d else m) 1500 ds;
      vals = map (d: if kind d == "override" then d.content else d) (filter (d: prio d == best) ds);
      bad = filter (v: !(opt.type.check v)) vals;
    in
    if vals == [ ] then
      (if opt ? default then opt.default else throw "The option `${showPath loc}' is used but not defined.")
    else if bad != [ ] then
      throw "A definition for option `${showPath loc}' is not of type `${opt.type.name}': ${builtins.toJSON (builtins.head bad)}"
    else opt.type.merge loc (map (v: { value = v; }) vals);

  evalNode = loc: decl: defs:
    if kind decl == "option" then resolveOption loc decl defs
    else if kind decl == "free" then mergeAny loc (map (v: { value = v; }) (map (d: if kind d == "override" then d.content else d) (concatMap discharge defs)))
    else
      let
        defined = unique (concatMap (v: attrNames (pushDown v)) defs);
        unknown = filter (n: !(decl ? ${n})) defined;
      in
      if unknown != [ ] then throw "The option `${showPath (loc ++ [ (builtins.head unknown) ])}' does not exist."
      else
        builtins.mapAttrs
          (n: d: evalNode (loc ++ [ n ]) d (concatMap (v: (pushDown v).${n} or [ ]) defs))
          decl;

  # The option trees NixOS itself declares, reduced to what the module sets.
  baseModule = {
    options = {
      assertions = mkOption { type = types.listOf types.anything; default = [ ]; };
      warnings = mkOption { type = types.listOf types.str; default = [ ]; };
      system = free;
      systemd = free;
      users = free;
      environment = free;
    };
  };

  evalModules = { modules, specialArgs ? { } }:
    let
      args = specialArgs // { inherit config lib; };
      load = m:
        let
          f = if builtins.isPath m || isString m then import m else m;
          r = if builtins.isFunction f then f args else f;
          body =
            if r ? options || r ? config then { options = r.options or { }; config = r.config or { }; }
            else { options = { }; config = removeAttrs r [ "imports" ]; };
        in
        [ body ] ++ concatMap load (r.imports or [ ]);
      all = concatMap load ([ baseModule ] ++ modules);
      decls = foldl' recursiveUpdateDecl { } (map (m: m.options) all);
      recursiveUpdateDecl = a: b:
        a // builtins.mapAttrs
          (n: v: if a ? ${n} && kind v == null && kind a.${n} == null then recursiveUpdateDecl a.${n} v else v)
          b;
      config = evalNode [ ] decls (map (m: m.config) all);
    in
    {
      inherit config;
      failedAssertions = map (a: a.message) (filter (a: !a.assertion) config.assertions);
    };

  lib = {
    inherit mkOption types recursiveUpdate unique evalModules isDerivation;
    inherit (builtins) attrNames attrValues all any length concatStringsSep foldl' elem;
    mkEnableOption = name: mkOption { type = types.bool; default = false; description = "Whether to enable ${name}."; };
    mkIf = condition: content: { _type = "if"; inherit condition content; };
    mkMerge = contents: { _type = "merge"; inherit contents; };
    mkDefault = content: { _type = "override"; priority = 1000; inherit content; };
    mkForce = content: { _type = "override"; priority = 50; inherit content; };
    literalExpression = text: { _type = "literalExpression"; inherit text; };
    mapAttrsToList = f: a: map (n: f n a.${n}) (attrNames a);
    mapAttrs = builtins.mapAttrs;
    genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
    optional = c: x: if c then [ x ] else [ ];
    optionalString = c: s: if c then s else "";
    optionalAttrs = c: a: if c then a else { };
    getName = x: if isString x then (builtins.parseDrvName x).name else x.pname or (builtins.parseDrvName x.name).name;
    escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString s) + "'";
    escapeShellArgs = l: builtins.concatStringsSep " " (map (s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString s) + "'") l);
    stringAfter = deps: text: { inherit deps text; };
    fileContents = file:
      let s = builtins.readFile file; n = builtins.stringLength s; in
      if n > 0 && builtins.substring (n - 1) 1 s == "\n" then builtins.substring 0 (n - 1) s else s;
    cleanSource = src: src;
    platforms = { linux = [ "x86_64-linux" "aarch64-linux" ]; darwin = [ "x86_64-darwin" "aarch64-darwin" ]; };
  };
in
lib
