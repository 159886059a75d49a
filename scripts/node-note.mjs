// Runs first in `prepare`. npm itself may run on an older system Node than
// incrementum needs (Node 24, installed as the `node` devDependency and first
// on PATH in every npm script). npm then warns about each package's engines
// (about 45 lines of EBADENGINE under Node 20), which .npmrc quiets
// (loglevel=error): this says in one line what a person needs to know instead.
const npmNode = /\bnode\/v(\d+)\.\S*/.exec(process.env.npm_config_user_agent ?? '');
const needed = 24;
if (npmNode && Number(npmNode[1]) < needed)
  console.log(
    `note: npm runs on Node ${npmNode[0].slice(5)}; incrementum uses the Node ${process.versions.node} it installed.` +
      ` To run its tools by hand, put it first on PATH: export PATH=$PWD/node_modules/.bin:$PATH`,
  );
