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
    isList
    listToAttrs
    match
    replaceStrings
    splitVersion
    ;
in
rec {
  genAttrs =
    names: f:
    listToAttrs (
      map (n: {
        name = n;
        value = f n;
      }) names
    );
  inherit (builtins) mapAttrs;
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

  toList = x: if isList x then x else [ x ];
  unique = foldl' (acc: e: if builtins.elem e acc then acc else acc ++ [ e ]) [ ];

  optionalString = cond: s: if cond then s else "";
  escapeShellArg =
    arg:
    let
      s = toString arg;
    in
    if match "[[:alnum:],._+:@%/-]+" s == null then "'${replaceStrings [ "'" ] [ "'\\''" ] s}'" else s;
  escapeShellArgs = args: builtins.concatStringsSep " " (map escapeShellArg args);

  versionAtLeast = a: b: compareVersions a b >= 0;
  versionOlder = a: b: compareVersions a b < 0;
  versions.majorMinor =
    v:
    let
      p = splitVersion v;
    in
    "${elemAt p 0}.${elemAt p 1}";

  importTOML = path: builtins.fromTOML (builtins.readFile path);

  fix =
    f:
    let
      x = f x;
    in
    x;
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

  licenses = {
    mit = {
      shortName = "mit";
      fullName = "MIT License";
      free = true;
    };
    nvidiaCuda = {
      shortName = "CUDA EULA";
      fullName = "CUDA Toolkit End User License Agreement (EULA)";
      free = false;
    };
    nvidiaCudaRedist = {
      shortName = "CUDA EULA";
      fullName = "CUDA Toolkit End User License Agreement (EULA)";
      free = false;
      redistributable = true;
    };
    # Another unfree licence, to show the flake's predicate refuses it.
    cudnnStandIn = {
      shortName = "cuDNN EULA";
      fullName = "cuDNN Supplement to Software License Agreement";
      free = false;
    };
  };
}
