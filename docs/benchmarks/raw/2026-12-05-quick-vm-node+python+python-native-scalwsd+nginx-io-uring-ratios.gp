# ScalWS benchmark ratios (bench/report.py); run from this directory:
#   gnuplot 2026-12-05-quick-vm-node+python+python-native-scalwsd+nginx-io-uring-ratios.gp
set terminal svg size 900,600 dynamic font 'sans,12' background rgb 'white'
set output '../2026-12-05-quick-node+python+python-native-scalwsd+nginx-io-uring-ratios.svg'
set title "scalwsd against each peer: above 1 = scalwsd better" noenhanced
set datafile separator '\t'
set datafile missing '?'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'ratio (log scale)'
set logscale y 2
set yrange [0.5:2]
set ytics ("0.5" 0.5, "1" 1, "2" 2)
set grid ytics
set bmargin 7
set key outside bottom center horizontal noenhanced
set xtics ("node\nscalwsd-uring" 0, "node\nnginx" 1, "python\nscalwsd-uring" 2, "python\nnginx" 3, "python-native\nscalwsd-uring" 4) scale 0 noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#333333' front
plot '2026-12-05-quick-vm-node+python+python-native-scalwsd+nginx-io-uring-ratios.dat' using 2 title 'req/s (scalwsd / peer)', \
     '' using 3 title 'capacity: CPU µs/req (peer / scalwsd)'
