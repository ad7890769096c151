/** plotly's gl2d bundle has the API of plotly.js (its types, as the basic bundle's are). */
declare module "plotly.js-gl2d-dist-min" {
  import * as Plotly from "plotly.js";
  export = Plotly;
}
