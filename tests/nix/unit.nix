# Unit tests of the pure Nix functions, one file per topic in ./unit (as pyproject.nix's
# lib/test.nix gathers its lib/test_*.nix), each an attribute set of tests
# `{ expr; expected; }`. Evaluates to the list of failures, `[ ]` when every test passes:
#   nix eval --json --file tests/nix/unit.nix                   (the stand-in's lib)
#   nix build .#checks.x86_64-linux.unit                         (the flake's nixpkgs' lib)
{
  lib ? import ./nixpkgs/lib,
}:
let
  args = {
    inherit lib;
    tt = import ../../nix/lib.nix { inherit lib; };
    fixtures = import ./unit/fixtures.nix { inherit lib; };
  };
  topics = {
    manifest = import ./unit/manifest.nix args;
    wrap = import ./unit/wrap.nix args;
    lock = import ./unit/lock.nix args;
    config = import ./unit/config.nix args;
  };
  failuresOf =
    topic: tests:
    builtins.concatMap (
      name:
      let
        t = tests.${name};
      in
      if t.expr == t.expected then
        [ ]
      else
        [
          {
            name = "${topic}.${name}";
            inherit (t) expr expected;
          }
        ]
    ) (builtins.attrNames tests);
in
builtins.concatMap (topic: failuresOf topic topics.${topic}) (builtins.attrNames topics)
