#!/bin/sh
# Metric (TFM) files of the LH Cyrillic fonts in T2A encoding (Russian, Ukrainian,
# Bulgarian, ... with \usepackage[T2A]{fontenc}), installed into TEXMFLOCAL.
#
# Debian ships these fonts as vector Type 1 outlines (cm-super, already in the
# pdfTeX font map) but their metrics only as METAFONT sources, which TeX turns into
# TFM files on first use (mktextfm). Compile jobs never generate fonts (the TeX
# tree is read-only in the sandbox), so the metrics are made here once, at install
# time, with METAFONT: about 0.2 s per font, 434 fonts. The TFM files equal what
# mktextfm makes (TFM dimensions do not depend on the mode's resolution).
#
# Run as root (Dockerfile, scripts/ensure-tex.ts). Idempotent: existing files are kept.
set -eu

enc=t2a
map=$(kpsewhich pdftex.map)
local_tree=$(kpsewhich -var-value TEXMFLOCAL)
dest="$local_tree/fonts/tfm/lh/lh-$enc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$dest"
# the font names the map gives a vector version in this encoding
grep " <cm-super-$enc.enc " "$map" | cut -d' ' -f1 | sort -u > "$work/names"
cd "$work"
made=0
while read -r name; do
  case "$name" in *[!a-z0-9]*) continue ;; esac
  [ -f "$dest/$name.tfm" ] && continue
  # the LH sources derive everything (encoding, shape, size) from the file's name
  echo "input fikparm;" > "$name.mf"
  if mf-nowin "\\mode:=ljfour; mag:=1; batchmode; input $name" > /dev/null 2>&1 && [ -s "$name.tfm" ]; then
    cp "$name.tfm" "$dest/$name.tfm"
    made=$((made + 1))
  fi
  rm -f "$name".*
done < "$work/names"
chmod -R a+rX "$local_tree"
mktexlsr "$local_tree" > /dev/null 2>&1
echo "lh-tfm: $made new $enc metric files in $dest ($(ls "$dest" | wc -l) in all)"
