#!/bin/sh
# install.sh SRC DEST: each package of SRC (tex/latex/<pkg>/) is copied into the TEXMF tree DEST
# only where TeX Live itself has no <pkg>.sty: a fallback must never shadow the real package
# (DEST, TEXMFLOCAL, is searched before TeX Live's own tree). Run before mktexlsr DEST.
set -eu
src=$1
dest=$2
for d in "$src"/tex/latex/*/; do
  pkg=$(basename "$d")
  rm -rf "$dest/tex/latex/$pkg"
  if kpsewhich -must-exist "$pkg.sty" >/dev/null 2>&1; then
    echo "texmf-fallback: TeX Live has $pkg; the fallback is not installed"
    continue
  fi
  mkdir -p "$dest/tex/latex/$pkg"
  cp "$d"*.sty "$dest/tex/latex/$pkg/"
  echo "texmf-fallback: $pkg installed"
done
