#include "posgeom/report/html_page.h"

#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;padding:16px 20px;max-width:1400px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f5f5f5}table.identity td{text-align:left}
figure{margin:8px 0 20px}figcaption{font-size:13px;color:#444;max-width:900px;margin-top:4px}
.panels{display:flex;flex-wrap:wrap;gap:6px}.row{display:flex;flex-wrap:wrap;gap:24px}.row figure{max-width:360px}
svg.plot{max-width:100%;height:auto;background:#fff}
svg text{font:10px system-ui,Helvetica,Arial,sans-serif;fill:#222}svg text.title{font-size:11px;font-weight:600}
svg text.label{font-size:10px;fill:#444}svg text.tick,svg text.legend{font-size:9px}
svg .frame{fill:none;stroke:#999;stroke-width:.6}svg .tick{stroke:#999}svg image.heat{image-rendering:pixelated}
nav a{margin-right:12px}
@media print{body{max-width:none;padding:0}figure,tr{break-inside:avoid}nav{display:none}}
)";

}  // namespace

std::string pageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>" +
         escapeXml(title) + "</title><style>" + kStyle + "</style></head><body>\n";
}

std::string pageEnd() { return "</body></html>\n"; }

}  // namespace posgeom::report
