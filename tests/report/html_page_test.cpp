#include "posgeom/report/html_page.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(HtmlPage, OneSelfContainedDocumentWithTheTitleEscaped) {
  const auto page = report::pageStart("a < b & \"c\"") + "<p>x</p>" + report::pageEnd();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>a &lt; b &amp; &quot;c&quot;</title>"), std::string::npos) << page.substr(0, 300);
  EXPECT_NE(page.find("<style>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos);  // nothing fetched
  EXPECT_EQ(page.substr(page.size() - 15), "</body></html>\n");
}

}  // namespace
}  // namespace posgeom::testing
