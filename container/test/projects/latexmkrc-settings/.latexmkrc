# build settings of the report
@default_files = ('report.tex');
$pdf_mode = 5;
ensure_path('TEXINPUTS', './styles//');
$clean_ext = 'bbl run.xml';
