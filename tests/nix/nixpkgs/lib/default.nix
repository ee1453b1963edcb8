# Stand-in for nixpkgs' lib: only the functions the project's Nix code (and this
# stand-in) uses, with nixpkgs' names and semantics, written for the tests.
let
  inherit (builtins)
    compareVersions
    elemAt
    filter
    foldl'
    head
    isAttrs
    isFunction
    isList
    listToAttrs
    match
    replaceStrings
    splitVersion
    stringLength
    substring
    ;

  lib = rec {
    inherit filter;
    inherit (builtins) mapAttrs elem;

    genAttrs =
      names: f:
      listToAttrs (
        map (n: {
          name = n;
          value = f n;
        }) names
      );
    isDerivation = x: isAttrs x && (x.type or null) == "derivation";

    getOutput =
      output: pkg: if !(pkg.outputSpecified or false) then pkg.${output} or pkg.out or pkg else pkg;
    getFirstOutput =
      candidates: pkg:
      let
        present = filter (o: pkg ? ${o}) candidates;
      in
      if pkg.outputSpecified or false || present == [ ] then pkg else pkg.${head present};
    getBin = getOutput "bin";
    getLib = getOutput "lib";
    getInclude = getFirstOutput [
      "include"
      "dev"
      "out"
    ];
    getExe' =
      x: y:
      assert isDerivation x;
      assert builtins.isString y && match ".*/.*" y == null;
      "${getBin x}/bin/${y}";
    # lib/strings.nix's getName: pname, else the name without its version.
    getName = x: x.pname or (builtins.parseDrvName x.name).name;

    toList = x: if isList x then x else [ x ];
    unique = foldl' (acc: e: if builtins.elem e acc then acc else acc ++ [ e ]) [ ];
    imap0 = f: list: builtins.genList (i: f i (elemAt list i)) (builtins.length list);
    optional = cond: x: if cond then [ x ] else [ ];
    optionals = cond: xs: if cond then xs else [ ];
    optionalAttrs = cond: attrs: if cond then attrs else { };
    any = builtins.any;
    all = builtins.all;

    optionalString = cond: s: if cond then s else "";
    hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;
    hasSuffix =
      suffix: s:
      let
        n = stringLength s;
        m = stringLength suffix;
      in
      n >= m && substring (n - m) m s == suffix;
    concatMapStringsSep = sep: f: list: builtins.concatStringsSep sep (map f list);
    escapeShellArg =
      arg:
      let
        s = toString arg;
      in
      if match "[[:alnum:],._+:@%/-]+" s == null then
        "'${replaceStrings [ "'" ] [ "'\\''" ] s}'"
      else
        s;
    escapeShellArgs = args: builtins.concatStringsSep " " (map escapeShellArg args);

    versionAtLeast = a: b: compareVersions a b >= 0;
    versionOlder = a: b: compareVersions a b < 0;
    versions.majorMinor =
      v:
      let
        p = splitVersion v;
      in
      "${elemAt p 0}.${elemAt p 1}";
    versions.major = v: elemAt (splitVersion v) 0;
    versions.minor = v: elemAt (splitVersion v) 1;

    importTOML = path: builtins.fromTOML (builtins.readFile path);

    fix =
      f:
      let
        x = f x;
      in
      x;
    toFunction = v: if isFunction v then v else _: v;
    extends =
      overlay: f: final:
      let
        prev = f final;
      in
      prev // overlay final prev;
    composeExtensions =
      f: g: final: prev:
      let
        fApplied = f final prev;
      in
      fApplied // g final (prev // fApplied);
    composeManyExtensions = foldl' composeExtensions (_: _: { });

    # lib/customisation.nix: `condition` is checked when a path of the derivation or
    # of one of its outputs is taken (drvPath, outPath), not when other attributes
    # (pname, meta, passthru) are read. check-meta hands it the verdict on licences
    # and `broken`.
    extendDerivation =
      condition: passthru: drv:
      let
        outputs = drv.outputs or [ "out" ];
        commonAttrs =
          drv // listToAttrs outputsList // { all = map (x: x.value) outputsList; } // passthru;
        outputsList = map (outputName: {
          name = outputName;
          value = commonAttrs // {
            inherit (drv.${outputName}) type outputName;
            outputSpecified = true;
            drvPath = assert condition; drv.${outputName}.drvPath;
            outPath = assert condition; drv.${outputName}.outPath;
          };
        }) outputs;
      in
      commonAttrs
      // {
        drvPath = assert condition; drv.drvPath;
        outPath = assert condition; drv.outPath;
      };

    # lib/trivial.nix: functions whose formal arguments are declared explicitly.
    setFunctionArgs = f: args: {
      __functor = _: f;
      __functionArgs = args;
    };
    functionArgs =
      f:
      if f ? __functor then
        f.__functionArgs or (functionArgs (f.__functor f))
      else
        builtins.functionArgs f;
    mirrorFunctionArgs =
      f:
      let
        fArgs = functionArgs f;
      in
      g: setFunctionArgs g fArgs;

    # lib/customisation.nix: `.override` calls the function again with changed
    # arguments (a set, or a function of the old ones), re-applies earlier
    # `.overrideAttrs`, and declares the function's formal arguments
    # (`lib.functionArgs drv.override`).
    makeOverridable =
      f:
      let
        mirrorArgs = mirrorFunctionArgs f;
      in
      mirrorArgs (
        origArgs:
        let
          result = f origArgs;
          overrideWith =
            newArgs: origArgs // (if isFunction newArgs then newArgs origArgs else newArgs);
          overrideArgs = mirrorArgs (newArgs: makeOverridable f (overrideWith newArgs));
          overrideResult = g: makeOverridable (mirrorArgs (args: g (f args))) origArgs;
        in
        if isAttrs result then
          result
          // {
            override = overrideArgs;
          }
          // optionalAttrs (result ? overrideAttrs) {
            overrideAttrs = fdrv: overrideResult (x: x.overrideAttrs fdrv);
          }
        else
          result
      );
    callPackageWith =
      autoArgs: fn: args:
      let
        f = if isFunction fn then fn else import fn;
      in
      makeOverridable f (builtins.intersectAttrs (functionArgs f) autoArgs // args);

    fileset = import ./fileset.nix { inherit lib; };

    licenses = import ./licenses.nix { inherit lib; };
  };
in
lib
