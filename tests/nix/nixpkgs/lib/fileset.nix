# Stand-in for nixpkgs' lib.fileset (lib/fileset/default.nix): toSource, unions,
# difference, fileFilter and maybeMissing, with nixpkgs' semantics where the
# project meets them: paths are coerced to the files they contain (a missing path is
# an error unless wrapped in maybeMissing), a directory that contains no file of the
# set is left out, the store path is named "source", and `root` must be a directory
# path that holds every file of the set. The representation differs: here a file set
# is the attribute set of its files' absolute paths.
{ lib }:
let
  inherit (builtins)
    attrNames
    concatMap
    foldl'
    isPath
    listToAttrs
    pathExists
    readDir
    typeOf
    ;

  fileset = files: {
    _type = "fileset";
    _files = files;
  };

  isFileset = x: (x._type or null) == "fileset";

  # Every file below a directory (path values), with its type; symlinks are files.
  walk =
    dir:
    let
      entries = readDir dir;
    in
    concatMap (
      name:
      if entries.${name} == "directory" then
        walk (dir + "/${name}")
      else
        [
          {
            path = dir + "/${name}";
            inherit name;
            type = entries.${name};
          }
        ]
    ) (attrNames entries);

  fromFiles =
    files:
    fileset (
      listToAttrs (
        map (f: {
          name = toString f.path;
          value = true;
        }) files
      )
    );

  # lib/filesystem.nix's pathType is builtins.readFileType (Nix 2.14).
  isDirectory = path: builtins.readFileType path == "directory";

  coerce =
    context: value:
    if isFileset value then
      value
    else if !isPath value then
      throw "${context} is of type ${typeOf value}, but it should be a file set or a path instead."
    else if !pathExists value then
      throw "${context} (${toString value}) is a path that does not exist. To create a file set from a path that may not exist, use `lib.fileset.maybeMissing`."
    else if isDirectory value then
      fromFiles (walk value)
    else
      fileset { ${toString value} = true; };

  # The directories (absolute path strings) that hold a file of `files`, below `root`.
  directoriesOf =
    root: files:
    let
      rootString = toString root;
      parents =
        file:
        let
          parent = dirOf file;
        in
        if parent == rootString || parent == "/" then [ ] else [ parent ] ++ parents parent;
    in
    listToAttrs (
      map (d: {
        name = d;
        value = true;
      }) (concatMap parents (attrNames files))
    );
in
{
  /**
    The files of `fileset`, copied into the store as one path named "source" whose
    top is `root`.

    # Type

    ```
    toSource :: { root :: Path; fileset :: FileSet | Path; } -> String
    ```
  */
  toSource =
    {
      root,
      fileset,
    }:
    let
      set = coerce "lib.fileset.toSource: `fileset`" fileset;
      outside = lib.filter (f: !lib.hasPrefix "${toString root}/" f) (attrNames set._files);
      directories = directoriesOf root set._files;
    in
    if !isPath root then
      throw "lib.fileset.toSource: `root` is of type ${typeOf root}, but it should be a path instead."
    else if !pathExists root then
      throw "lib.fileset.toSource: `root` (${toString root}) does not exist."
    else if !isDirectory root then
      throw "lib.fileset.toSource: `root` (${toString root}) is a file, but it should be a directory instead."
    else if outside != [ ] then
      throw "lib.fileset.toSource: `fileset` contains ${builtins.head outside}, which is not under the `root` (${toString root})."
    else
      builtins.path {
        name = "source";
        path = root;
        filter =
          path: type: if type == "directory" then directories ? ${path} else set._files ? ${path};
      };

  /**
    The files that are in any of the given file sets (or paths).

    # Type

    ```
    unions :: [ FileSet | Path ] -> FileSet
    ```
  */
  unions =
    filesets:
    fileset (
      foldl' (acc: set: acc // set._files) { } (
        lib.imap0 (i: coerce "lib.fileset.unions: Element ${toString i}") filesets
      )
    );

  /**
    The files of `positive` that are not in `negative`.

    # Type

    ```
    difference :: FileSet | Path -> FileSet | Path -> FileSet
    ```
  */
  difference =
    positive: negative:
    let
      plus = coerce "lib.fileset.difference: First argument" positive;
      minus = coerce "lib.fileset.difference: Second argument (negative set)" negative;
    in
    fileset (removeAttrs plus._files (attrNames minus._files));

  /**
    The files below directory `path` for which `predicate { name; type; hasExt; }`
    holds (`type`: "regular", "symlink" or "unknown").

    # Type

    ```
    fileFilter :: ({ name :: String; type :: String; hasExt :: String -> Bool; } -> Bool) -> Path -> FileSet
    ```
  */
  fileFilter =
    predicate: path:
    if !isPath path then
      throw "lib.fileset.fileFilter: Second argument is of type ${typeOf path}, but it should be a path instead."
    else if !pathExists path then
      throw "lib.fileset.fileFilter: Second argument (${toString path}) is a path that does not exist."
    else if !isDirectory path then
      throw "lib.fileset.fileFilter: Second argument (${toString path}) is a file, but it should be a directory instead."
    else
      fromFiles (
        lib.filter (
          f:
          predicate {
            inherit (f) name type;
            hasExt = ext: lib.hasSuffix ".${ext}" f.name;
          }
        ) (walk path)
      );

  /**
    The files of `path`, or no file where it does not exist.

    # Type

    ```
    maybeMissing :: Path -> FileSet
    ```
  */
  maybeMissing =
    path:
    if !isPath path then
      throw "lib.fileset.maybeMissing: Argument is of type ${typeOf path}, but it should be a path instead."
    else if pathExists path then
      coerce "lib.fileset.maybeMissing: Argument" path
    else
      fileset { };
}
