# Runs biber (perl -e THIS -- ARGS) with every place where it evaluates text of the
# document or its .bib as Perl checked first, so that text can only be data:
# - a sourcemap replacement is the body of "..." under s///ee (Biber::Utils::ireplace),
#   after $MAPLOOP (an entry's field) is pasted in: only text, $N / ${N} and escapes;
# - sort keys are pasted into "...->getSortKey(q{KEY})" (Biber::sort_list): a .bib field
#   with an unbalanced brace closed q{} and ran code; each key's \ { } are escaped, so
#   q{} gives back exactly the key;
# - a sorting locale is pasted into "Biber::UCollate->new('LOCALE', ...)": a name only;
# - data sources become "require Biber::Input::TYPE::DATATYPE": file/bibtex or biblatexml.
# bcf.ts refuses such a main.bcf before biber runs; this is the check at the evaluation.
use strict;
use warnings;

# biber's own logger (it owns the output streams by then): "ERROR - ..." as biber's errors
sub refuse {
  Log::Log4perl::get_logger('main')->error($_[0]);
  exit 2;
}

require Biber;
require Biber::Utils;
require Biber::DataList;
require Biber::Section;

my $SAFE_REPLACE = qr/\A(?:[^\\\$\@"\x00-\x1f\x7f]|\\[^A-Za-z0-9\x00-\x1f\x7f]|\\[ntLUEQFul]|\$[1-9][0-9]*+(?![\[\{]|->)|\$\{[1-9][0-9]*+\})*+\z/;
my $SAFE_LOCALE = qr/\A[A-Za-z0-9_.-]{0,64}\z/;
my %DATATYPES = (bibtex => 1, biblatexml => 1);

# Functions are imported by copying code references: replace every copy made so far, in
# every package; modules loaded later (the input modules) import the replacement.
sub replace_everywhere {
  my ($orig, $new) = @_;
  my @stashes = ('main::');
  my %seen;
  no strict 'refs';
  no warnings 'redefine';
  while (defined(my $stash = shift @stashes)) {
    foreach my $name (keys %{$stash}) {
      my $full = $stash eq 'main::' ? $name : "$stash$name";
      if ($name =~ /::\z/) {
        push @stashes, $full unless $seen{$full}++ or $full eq 'main::';
        next;
      }
      my $code = defined(*{$full}{CODE}) ? *{$full}{CODE} : undef;
      *{$full} = $new if $code and $code == $orig;
    }
  }
}

my $ireplace = \&Biber::Utils::ireplace;
replace_everywhere($ireplace, sub {
  my ($value, $match, $replace) = @_;
  refuse("the sourcemap replacement \"$replace\" is not plain text (text, \$1...\$9 and backslash escapes only)")
    unless defined($replace) and $replace =~ $SAFE_REPLACE;
  goto &$ireplace;
});

my $locale2bcp47 = \&Biber::Utils::locale2bcp47;
replace_everywhere($locale2bcp47, sub {
  my ($locale) = @_;
  refuse("the sorting locale \"$locale\" is not a locale name")
    if defined($locale) and (ref($locale) or $locale !~ $SAFE_LOCALE);
  goto &$locale2bcp47;
});

my $sortdata = \&Biber::DataList::get_sortdata_for_key;
replace_everywhere($sortdata, sub {
  my $d = $sortdata->(@_);
  return $d unless ref($d) eq 'ARRAY' and ref($d->[1]) eq 'ARRAY';
  return [$d->[0], [map { defined($_) ? s/([\\{}])/\\$1/gr : $_ } $d->[1]->@*], $d->@[2 .. $#$d]];
});

my $datasources = \&Biber::Section::get_datasources;
replace_everywhere($datasources, sub {
  my $ds = $datasources->(@_);
  foreach my $d (ref($ds) eq 'ARRAY' ? $ds->@* : ()) {
    my ($type, $datatype) = ($d->{type} // '', $d->{datatype} // '');
    refuse("data source type \"$type/$datatype\" is not allowed (file/bibtex, file/biblatexml)")
      unless $type eq 'file' and $DATATYPES{$datatype};
  }
  return $ds;
});

$0 = '/usr/bin/biber';
do $0;
die $@ if $@;
